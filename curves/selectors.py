"""Reads for the Pareto curves: one run's curves with their coverage, and the official data.

Two views of the same cells:
- run_curves / run_failed_cells: every curve of one run attempt (REFERENCE §4), assessed with
  curves.coverage; what PR reviewers and CI read. run_coverage / commit_coverage add the admin
  bypass recorded for each curve's (head SHA, key); bypass_list and friends read the bypasses.
- official_points / official_chart_series: the official data of one model and scenario, grouped
  by (hardware, framework, precision, spec method, disagg), for the charts; plus cheap distinct
  lists (official_models, official_scenarios, ...) for the page controls.

Metric values are the Cell columns as stored; chart values that are not finite become None.
"""

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date

from django.core.cache import cache
from django.db.models import Case, Exists, OuterRef, Q, QuerySet, Value, When

from curves.coverage import (
    Y_METRIC,
    CoveragePoint,
    CoverageResult,
    coverage_evaluate,
    coverage_x_metric,
)
from curves.derived import DERIVED_METRICS, cost_per_million_tokens, tokens_per_mw
from curves.frontier import METRIC_DIRECTIONS, Point, frontier_for_metrics
from curves.identity import CurveIdentity, curve_label
from curves.models import BypassState, GpuCost, ParetoBypass, ParetoBypassAudit
from runs.cache import generation_key
from runs.models import Cell, CellStatus, Config, WorkflowRun
from runs.selectors import official_runs_visible

# Metrics stored as Cell columns that a chart axis can show (no mean_* columns are stored).
_CELL_FIELDS = {field.name for field in Cell._meta.get_fields()}
METRIC_COLUMNS: tuple[str, ...] = tuple(
    metric for metric in METRIC_DIRECTIONS if metric in _CELL_FIELDS
)
# Every metric a chart axis accepts: the stored columns and the derived cost/energy metrics.
CHART_METRICS: tuple[str, ...] = (*METRIC_COLUMNS, *DERIVED_METRICS)
OFFICIAL_POINTS_CACHE_SECONDS = 24 * 60 * 60


# ---------------------------------------------------------------------------------------------
# One run's curves
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RunCurvePoint:
    """One ok cell of a curve. x/y are the coverage metrics as stored (None or NaN possible;
    such points are listed in the curve's coverage.invalid)."""

    cell_id: int
    config_id: int
    concurrency: int
    x: float | None
    y: float | None
    topology: str  # Config.topology_label, e.g. "TP8 EP8 DPA" or "P:TP8 D:TP8 EP8 DPA"
    image: str  # image reference, "" when unknown


@dataclass(frozen=True, kw_only=True)
class RunCurve:
    identity: CurveIdentity
    key: str  # CurveIdentity.key(x_metric=coverage x metric), stable for URLs
    label: str  # the label reviewers write in PR verdicts
    points: tuple[RunCurvePoint, ...]  # by concurrency
    coverage: CoverageResult  # refs of its points are cell ids
    # The bypass of (the run's head SHA, key) in any state; only run_coverage and its siblings
    # look it up, run_curves leaves it None.
    bypass: ParetoBypass | None = None

    @property
    def x_metric(self) -> str:
        return self.coverage.x_metric

    @property
    def y_metric(self) -> str:
        return self.coverage.y_metric

    @property
    def bypass_state(self) -> str:
        return self.bypass.state if self.bypass else "none"

    @property
    def approved_bypass(self) -> ParetoBypass | None:
        return self.bypass if self.bypass and self.bypass.is_approved else None

    @property
    def verdict(self) -> str:
        """The coverage verdict; an approved bypass annotates it but never changes the status."""
        if self.approved_bypass is None:
            return self.coverage.verdict
        return f"{self.coverage.verdict}; {self.approved_bypass.verdict_annotation}"


@dataclass(frozen=True, kw_only=True)
class FailedCell:
    """A cell that produced no measurement; never part of a curve's coverage."""

    cell_id: int
    config_id: int
    curve_key: str  # the curve it would have belonged to
    scenario: str
    concurrency: int
    topology: str
    image: str
    reason: str


def run_measured_in(*, run: WorkflowRun) -> WorkflowRun:
    """The run attempt whose cells hold this run's measurements: for a merge that reused a PR
    run (/reuse-sweep-run) that PR run, otherwise the run itself."""
    return run.source_run if run.source_run_id else run


def _curve_identity(cell: Cell) -> CurveIdentity:
    config = cell.config
    return CurveIdentity(
        model=config.model_prefix,
        scenario=cell.scenario,
        hardware=config.hardware,
        framework=config.framework,
        precision=config.precision,
        spec_method=config.spec_method,
    )


def _image_reference(cell: Cell) -> str:
    return cell.image.reference if cell.image else ""


def _run_cells(*, runs: Iterable[WorkflowRun]) -> QuerySet[Cell]:
    """The cells (ok and failed) of these runs' measurement runs, in curve point order."""
    measured_pks = {run_measured_in(run=run).pk for run in runs}
    return (
        Cell.objects.filter(run__in=measured_pks)
        .select_related("config", "image")
        .order_by("scenario", "concurrency", "pk")
    )


def _curves_build(*, measured: WorkflowRun, cells: Iterable[Cell]) -> list[RunCurve]:
    """The curves of one measurement run from its ok cells (in point order), sorted by key."""
    cells_by_curve: dict[CurveIdentity, list[Cell]] = defaultdict(list)
    for cell in cells:
        cells_by_curve[_curve_identity(cell)].append(cell)
    curves = []
    for identity, curve_cells in cells_by_curve.items():
        x_metric = coverage_x_metric(identity.scenario)
        points = tuple(
            RunCurvePoint(
                cell_id=cell.pk,
                config_id=cell.config_id,
                concurrency=cell.concurrency,
                x=getattr(cell, x_metric),
                y=cell.tput_per_gpu,
                topology=cell.config.topology_label,
                image=_image_reference(cell),
            )
            for cell in curve_cells
        )
        coverage = coverage_evaluate(
            (
                CoveragePoint(
                    concurrency=point.concurrency,
                    e2el_seconds=point.x,
                    tput_per_gpu=point.y,
                    ref=point.cell_id,
                )
                for point in points
            ),
            scenario=identity.scenario,
        )
        runner_labels = sorted({cell.config.runner_label for cell in curve_cells} - {""})
        label = curve_label(
            identity,
            x_metric=x_metric,
            runner_label=", ".join(runner_labels) or identity.hardware,
            images=(point.image for point in points),
            run_id=measured.run_id,
            attempt=measured.run_attempt,
            source_sha=measured.head_sha,
        )
        curves.append(
            RunCurve(
                identity=identity,
                key=identity.key(x_metric=x_metric),
                label=label,
                points=points,
                coverage=coverage,
            )
        )
    return sorted(curves, key=lambda curve: curve.key)


def _failed_cells_build(cells: Iterable[Cell]) -> list[FailedCell]:
    failed = []
    for cell in cells:
        identity = _curve_identity(cell)
        failed.append(
            FailedCell(
                cell_id=cell.pk,
                config_id=cell.config_id,
                curve_key=identity.key(x_metric=coverage_x_metric(identity.scenario)),
                scenario=cell.scenario,
                concurrency=cell.concurrency,
                topology=cell.config.topology_label,
                image=_image_reference(cell),
                reason=cell.failure_reason,
            )
        )
    return failed


def run_curves(*, run: WorkflowRun) -> list[RunCurve]:
    """Every curve of one run attempt with its points and Pareto coverage, sorted by key.

    Failed cells are not points (see run_failed_cells); ok cells whose x or y is missing, NaN
    or not positive are points that count as invalid evidence. One query (two when run.source_run
    is set but not loaded).
    """
    cells = _run_cells(runs=[run]).filter(status=CellStatus.OK)
    return _curves_build(measured=run_measured_in(run=run), cells=cells)


def run_failed_cells(*, run: WorkflowRun) -> list[FailedCell]:
    """The failed cells of one run attempt (of its source run when reused), with their reason."""
    return _failed_cells_build(_run_cells(runs=[run]).filter(status=CellStatus.FAILED))


@dataclass(frozen=True, kw_only=True)
class RunCoverage:
    run: WorkflowRun
    curves: list[RunCurve]  # with their bypass looked up
    failed_cells: list[FailedCell]
    assessed_sha: str = ""  # the commit whose bypasses answer: the run's head SHA by default


def _coverages_build(*, runs: Sequence[WorkflowRun]) -> list[RunCoverage]:
    """The coverage of these run attempts without bypasses: one query (run.source_run loaded)."""
    cells_by_run: dict[tuple[int, str], list[Cell]] = defaultdict(list)
    for cell in _run_cells(runs=runs):
        cells_by_run[cell.run_id, cell.status].append(cell)
    coverages = []
    for run in runs:
        measured = run_measured_in(run=run)
        coverages.append(
            RunCoverage(
                run=run,
                curves=_curves_build(
                    measured=measured, cells=cells_by_run[measured.pk, CellStatus.OK]
                ),
                failed_cells=_failed_cells_build(cells_by_run[measured.pk, CellStatus.FAILED]),
            )
        )
    return coverages


def runs_coverage(
    *, runs: Sequence[WorkflowRun], assessed_shas: Mapping[int, str] | None = None
) -> list[RunCoverage]:
    """The curves (each with the bypass of the assessed commit and its key) and failed cells
    of these run attempts, in their order. Two queries for any number of runs (one when no
    curve or SHA is found); run.source_run must be loaded.

    The assessed commit is the run's head SHA unless `assessed_shas` maps the run's pk to
    another full SHA (the PR head a reviewer assessed with this run as evidence). A bypass
    recorded for any other commit never answers."""
    coverages = _coverages_build(runs=runs)
    assessed = {run.pk: (assessed_shas or {}).get(run.pk, run.head_sha.lower()) for run in runs}
    bypasses = _bypasses_by_sha_and_curve(
        shas={sha for sha in assessed.values() if sha},
        curve_keys={curve.key for coverage in coverages for curve in coverage.curves},
    )
    return [
        replace(
            coverage,
            assessed_sha=assessed[coverage.run.pk],
            curves=[
                replace(curve, bypass=bypasses.get((assessed[coverage.run.pk], curve.key)))
                for curve in coverage.curves
            ],
        )
        for coverage in coverages
    ]


def run_coverage(*, run: WorkflowRun, assessed_sha: str | None = None) -> RunCoverage:
    """One run attempt's curves with the bypasses of the assessed commit (by default the run's
    head SHA), and its failed cells: two queries."""
    assessed_shas = {run.pk: assessed_sha.lower()} if assessed_sha else None
    [coverage] = runs_coverage(runs=[run], assessed_shas=assessed_shas)
    return coverage


def commit_coverage(*, sha_prefix: str) -> list[RunCoverage]:
    """The coverage of every run assessed for commits starting with the prefix (any case),
    newest run first: the latest attempt of each run whose head SHA starts with it, and the
    run attempts named by bypasses recorded for such a commit (a PR head assessed with an
    earlier commit's run). Four queries."""
    prefix = sha_prefix.lower()
    assessed_runs = dict(
        ParetoBypass.objects.filter(sha__startswith=prefix, run__isnull=False).values_list(
            "run_id", "sha"
        )
    )
    runs = (
        WorkflowRun.objects.filter(Q(head_sha__istartswith=prefix) | Q(pk__in=assessed_runs))
        .select_related("source_run")
        .order_by("-gh_created_at", "-run_id", "-run_attempt")
    )
    chosen: dict[int, WorkflowRun] = {}
    for run in runs:  # latest attempt first
        current = chosen.get(run.run_id)
        # The attempt a bypass names wins over a later one; otherwise the latest attempt.
        if current is None or (run.pk in assessed_runs and current.pk not in assessed_runs):
            chosen[run.run_id] = run
    return runs_coverage(runs=list(chosen.values()), assessed_shas=assessed_runs)


# ---------------------------------------------------------------------------------------------
# Pareto coverage bypasses
# ---------------------------------------------------------------------------------------------


def _bypass_base() -> QuerySet[ParetoBypass]:
    return ParetoBypass.objects.select_related(
        "run", "run__source_run", "requested_by", "decided_by"
    )


def _bypasses_by_sha_and_curve(
    *, shas: set[str], curve_keys: set[str]
) -> dict[tuple[str, str], ParetoBypass]:
    if not shas or not curve_keys:
        return {}
    bypasses = _bypass_base().filter(sha__in=shas, curve_key__in=curve_keys)
    return {(bypass.sha, bypass.curve_key): bypass for bypass in bypasses}


def bypass_list(
    *, sha_prefix: str | None = None, curve_key: str | None = None, state: str | None = None
) -> QuerySet[ParetoBypass]:
    """Bypasses, pending requests first, then the most recently changed; the run and users
    come in the same query. sha_prefix: 7 to 40 hexadecimal characters, any case."""
    bypasses = _bypass_base()
    if sha_prefix:
        bypasses = bypasses.filter(sha__startswith=sha_prefix.lower())
    if curve_key:
        bypasses = bypasses.filter(curve_key=curve_key)
    if state:
        bypasses = bypasses.filter(state=state)
    pending_first = Case(When(state=BypassState.REQUESTED, then=Value(0)), default=Value(1))
    return bypasses.order_by(pending_first, "-modified", "-pk")


def bypass_get(*, bypass_id: int) -> ParetoBypass | None:
    return _bypass_base().filter(pk=bypass_id).first()


def bypass_audit_list(*, bypass_id: int) -> QuerySet[ParetoBypassAudit]:
    """The audit of one bypass, oldest first, with the acting users."""
    return ParetoBypassAudit.objects.filter(bypass_id=bypass_id).select_related("actor")


@dataclass(frozen=True, kw_only=True)
class BypassWithCurve:
    bypass: ParetoBypass
    curve: RunCurve | None  # None when the assessed run is gone or no longer has the curve


def bypasses_with_curves(*, bypasses: Sequence[ParetoBypass]) -> list[BypassWithCurve]:
    """Each bypass with the current coverage of its curve in its assessed run: one query for
    the cells of all their runs (the runs come with the bypasses)."""
    runs = list({bypass.run_id: bypass.run for bypass in bypasses if bypass.run}.values())
    curves = {
        (coverage.run.pk, curve.key): curve
        for coverage in _coverages_build(runs=runs)
        for curve in coverage.curves
    }
    return [
        BypassWithCurve(bypass=bypass, curve=curves.get((bypass.run_id, bypass.curve_key)))
        for bypass in bypasses
    ]


# ---------------------------------------------------------------------------------------------
# Official data
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class OfficialPoint:
    cell_id: int
    config_id: int
    run_id: int  # GitHub run id of the official run
    run_attempt: int
    source_run_id: int  # GitHub run id that measured it; differs from run_id for a reused run
    date: date  # the official run's date (UTC)
    concurrency: int
    topology: str
    image: str
    metrics: dict[str, float | None]  # every METRIC_COLUMNS value as stored


@dataclass(frozen=True, kw_only=True)
class OfficialGroup:
    """One chart series of the official data."""

    hardware: str
    framework: str
    precision: str
    spec_method: str
    disagg: bool
    date: date  # the group's latest run date: every point is from official runs of that date
    points: tuple[OfficialPoint, ...]  # by concurrency, then topology

    @property
    def label(self) -> str:
        """Legend text, e.g. "mi355x / atom-disagg / fp4 / mtp / disagg"."""
        parts = [self.hardware, self.framework, self.precision]
        if self.spec_method != "none":
            parts.append(self.spec_method)
        if self.disagg:
            parts.append("disagg")
        return " / ".join(parts)


@dataclass(frozen=True, kw_only=True)
class _OfficialRun:
    run_id: int
    run_attempt: int
    source_run_id: int  # GitHub run id of the run whose cells hold the measurements
    date: date
    order: tuple  # later runs sort higher


_GroupKey = tuple[str, str, str, str, bool]  # hardware, framework, precision, spec, disagg
_GROUP_FIELDS = (
    "config__hardware",
    "config__framework",
    "config__precision",
    "config__spec_method",
    "config__disagg",
)


def _official_runs_by_measurement(
    *, as_of: date | None, run_id: int | None
) -> dict[int, _OfficialRun]:
    """Primary key of the run whose cells hold the measurements -> the official run they count
    for. Only the latest visible attempt of each GitHub run counts: it carries every artifact."""
    runs = official_runs_visible()
    if as_of is not None:
        runs = runs.filter(run_date__lte=as_of)
    if run_id is not None:
        runs = runs.filter(run_id=run_id)
    latest_attempts: dict[int, dict] = {}
    for row in runs.order_by("run_attempt").values(
        "run_id",
        "run_attempt",
        "run_date",
        "created",
        "gh_created_at",
        "measured_in_pk",
        "measured_in_run_id",
    ):
        latest_attempts[row["run_id"]] = row
    by_measurement: dict[int, _OfficialRun] = {}
    # Oldest first, so a measurement reused by several official runs counts for the first one.
    for row in sorted(latest_attempts.values(), key=lambda row: (row["run_date"], row["run_id"])):
        by_measurement.setdefault(
            row["measured_in_pk"],
            _OfficialRun(
                run_id=row["run_id"],
                run_attempt=row["run_attempt"],
                source_run_id=row["measured_in_run_id"],
                date=row["run_date"],
                order=(row["gh_created_at"] or row["created"], row["run_id"]),
            ),
        )
    return by_measurement


def _official_cells_filtered(
    *,
    run_pks: Iterable[int],
    model: str,
    scenario: str,
    precisions: Iterable[str] | None,
    hardware: Iterable[str] | None,
    frameworks: Iterable[str] | None,
) -> QuerySet[Cell]:
    cells = Cell.objects.filter(
        run_id__in=list(run_pks),
        status=CellStatus.OK,
        config__model_prefix=model,
        scenario=scenario,
    )
    for lookup, values in (
        ("config__precision__in", precisions),
        ("config__hardware__in", hardware),
        ("config__framework__in", frameworks),
    ):
        if values is not None:
            cells = cells.filter(**{lookup: list(values)})
    return cells


def _official_points_cache_key(**params: object) -> str:
    # A digest keeps arbitrary filter strings out of the cache key.
    payload = json.dumps(params, sort_keys=True, default=str)
    return generation_key("curves:official_points", hashlib.sha256(payload.encode()).hexdigest())


def official_points(
    *,
    model: str,
    scenario: str,
    as_of: date | None = None,
    run_id: int | None = None,
    precisions: Iterable[str] | None = None,
    hardware: Iterable[str] | None = None,
    frameworks: Iterable[str] | None = None,
) -> list[OfficialGroup]:
    """The official points of one model and scenario, grouped into chart series.

    Official: cells of official runs (the sweep on main) that are not hidden_from_official; for a
    merge that reused a PR run, the PR run's cells. Each group keeps only the points of its
    latest run date (at or before as_of when given), so topologies dropped since do not linger;
    within that date a re-measured cell counts once, from the latest run. With run_id, only that
    official run counts. None for a filter means no filtering. Groups are sorted by their fields.

    Cached per data generation (every ingest bumps it); three queries on a miss.
    """
    filters = {
        "precisions": sorted(precisions) if precisions is not None else None,
        "hardware": sorted(hardware) if hardware is not None else None,
        "frameworks": sorted(frameworks) if frameworks is not None else None,
    }
    cache_key = _official_points_cache_key(
        model=model, scenario=scenario, as_of=as_of, run_id=run_id, **filters
    )
    groups = cache.get(cache_key)
    if groups is None:
        groups = _official_points_query(
            model=model, scenario=scenario, as_of=as_of, run_id=run_id, **filters
        )
        cache.set(cache_key, groups, OFFICIAL_POINTS_CACHE_SECONDS)
    return groups


def _official_points_query(
    *,
    model: str,
    scenario: str,
    as_of: date | None,
    run_id: int | None,
    precisions: list[str] | None,
    hardware: list[str] | None,
    frameworks: list[str] | None,
) -> list[OfficialGroup]:
    official_by_measurement = _official_runs_by_measurement(as_of=as_of, run_id=run_id)

    def matching_cells(run_pks: Iterable[int]) -> QuerySet[Cell]:
        return _official_cells_filtered(
            run_pks=run_pks,
            model=model,
            scenario=scenario,
            precisions=precisions,
            hardware=hardware,
            frameworks=frameworks,
        )

    # Which group was measured in which run: small, and enough to find each group's latest date.
    latest_date: dict[_GroupKey, date] = {}
    group_runs = matching_cells(official_by_measurement).values_list(*_GROUP_FIELDS, "run_id")
    # order_by() drops Cell's default ordering, which would defeat DISTINCT.
    for *fields, run_pk in group_runs.order_by().distinct():
        group, group_date = tuple(fields), official_by_measurement[run_pk].date
        latest_date[group] = max(group_date, latest_date.get(group, group_date))
    if not latest_date:
        return []
    latest_dates = set(latest_date.values())
    latest_run_pks = [
        pk for pk, official in official_by_measurement.items() if official.date in latest_dates
    ]
    cells = matching_cells(latest_run_pks).select_related("config", "image")
    # Latest run first, so the first cell seen for a (config, concurrency, recipe) is the newest.
    newest_first = sorted(
        cells, key=lambda cell: official_by_measurement[cell.run_id].order, reverse=True
    )
    points_by_group: dict[_GroupKey, list[OfficialPoint]] = defaultdict(list)
    seen: set[tuple[int, int, str]] = set()
    for cell in newest_first:
        config: Config = cell.config
        group = (
            config.hardware,
            config.framework,
            config.precision,
            config.spec_method,
            config.disagg,
        )
        official = official_by_measurement[cell.run_id]
        measurement = (cell.config_id, cell.concurrency, cell.recipe_fingerprint)
        if official.date != latest_date[group] or measurement in seen:
            continue
        seen.add(measurement)
        points_by_group[group].append(
            OfficialPoint(
                cell_id=cell.pk,
                config_id=cell.config_id,
                run_id=official.run_id,
                run_attempt=official.run_attempt,
                source_run_id=official.source_run_id,
                date=official.date,
                concurrency=cell.concurrency,
                topology=config.topology_label,
                image=_image_reference(cell),
                metrics={metric: getattr(cell, metric) for metric in METRIC_COLUMNS},
            )
        )
    return [
        OfficialGroup(
            hardware=hardware_key,
            framework=framework,
            precision=precision,
            spec_method=spec_method,
            disagg=disagg,
            date=latest_date[(hardware_key, framework, precision, spec_method, disagg)],
            points=tuple(
                sorted(points, key=lambda point: (point.concurrency, point.topology, point.cell_id))
            ),
        )
        for (hardware_key, framework, precision, spec_method, disagg), points in sorted(
            points_by_group.items()
        )
    ]


# ---------------------------------------------------------------------------------------------
# Page controls: what the official data offers
# ---------------------------------------------------------------------------------------------


def _official_cells(*, model: str | None = None, scenario: str | None = None) -> QuerySet[Cell]:
    cells = Cell.objects.filter(
        run_id__in=official_runs_visible().values("measured_in_pk"), status=CellStatus.OK
    )
    if model is not None:
        cells = cells.filter(config__model_prefix=model)
    if scenario is not None:
        cells = cells.filter(scenario=scenario)
    return cells


def _official_distinct(field: str, *, model: str | None, scenario: str | None) -> list[str]:
    cells = _official_cells(model=model, scenario=scenario)
    return list(cells.order_by(field).values_list(field, flat=True).distinct())


def official_models() -> list[str]:
    """Model prefixes with official data, sorted. One query."""
    return _official_distinct("config__model_prefix", model=None, scenario=None)


def official_scenarios(*, model: str | None = None) -> list[str]:
    return _official_distinct("scenario", model=model, scenario=None)


def official_precisions(*, model: str | None = None, scenario: str | None = None) -> list[str]:
    return _official_distinct("config__precision", model=model, scenario=scenario)


def official_hardware(*, model: str | None = None, scenario: str | None = None) -> list[str]:
    return _official_distinct("config__hardware", model=model, scenario=scenario)


def official_frameworks(*, model: str | None = None, scenario: str | None = None) -> list[str]:
    return _official_distinct("config__framework", model=model, scenario=scenario)


def official_run_dates(*, model: str | None = None, scenario: str | None = None) -> list[date]:
    """Dates of visible official runs with measurements (for model/scenario), newest first."""
    measured = Cell.objects.filter(run_id=OuterRef("measured_in_pk"), status=CellStatus.OK)
    if model is not None:
        measured = measured.filter(config__model_prefix=model)
    if scenario is not None:
        measured = measured.filter(scenario=scenario)
    runs = official_runs_visible().filter(Exists(measured))
    return list(runs.order_by("-run_date").values_list("run_date", flat=True).distinct())


# ---------------------------------------------------------------------------------------------
# Chart series: official points on chosen axes, with their Pareto frontier
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ChartPoint:
    point: OfficialPoint
    # None when the value is missing or not finite, or a derived metric lacks its GPU cost.
    x: float | None
    y: float | None


@dataclass(frozen=True, kw_only=True)
class ChartSeries:
    group: OfficialGroup
    x_metric: str
    y_metric: str
    points: tuple[ChartPoint, ...]  # every point of the group, in the group's order
    frontier: tuple[ChartPoint, ...]  # the Pareto frontier of the points with x and y, by x


def _chart_value(point: OfficialPoint, *, metric: str, cost: GpuCost | None) -> float | None:
    tput = point.metrics["tput_per_gpu"]
    if metric == "cost_per_million_tokens":
        value = cost_per_million_tokens(tput, cost.dollars_per_gpu_hour if cost else None)
    elif metric == "tokens_per_mw":
        value = tokens_per_mw(tput, cost.watts_per_gpu if cost else None)
    else:
        value = point.metrics[metric]
    return value if value is not None and math.isfinite(value) else None


def _series(group: OfficialGroup, *, x_metric: str, y_metric: str, cost: GpuCost | None):
    points = tuple(
        ChartPoint(
            point=point,
            x=_chart_value(point, metric=x_metric, cost=cost),
            y=_chart_value(point, metric=y_metric, cost=cost),
        )
        for point in group.points
    )
    by_cell_id = {chart_point.point.cell_id: chart_point for chart_point in points}
    frontier = frontier_for_metrics(
        (
            Point(x=p.x, y=p.y, concurrency=p.point.concurrency, ref=p.point.cell_id)
            for p in points
            if p.x is not None and p.y is not None
        ),
        x_metric=x_metric,
        y_metric=y_metric,
    )
    return ChartSeries(
        group=group,
        x_metric=x_metric,
        y_metric=y_metric,
        points=points,
        frontier=tuple(by_cell_id[point.ref] for point in frontier),
    )


def official_chart_series(
    *,
    model: str,
    scenario: str,
    x_metric: str | None = None,
    y_metric: str = Y_METRIC,
    as_of: date | None = None,
    run_id: int | None = None,
    precisions: Iterable[str] | None = None,
    hardware: Iterable[str] | None = None,
    frameworks: Iterable[str] | None = None,
) -> list[ChartSeries]:
    """official_points as chart series on the chosen axes (CHART_METRICS; x defaults to the
    coverage latency of the scenario), each with its frontier (curves.frontier, so the line a
    chart draws is the frontier reviewers count). ValueError for an unknown metric.

    The official points come from the cache; derived metrics add one GpuCost query.
    """
    x_metric = x_metric or coverage_x_metric(scenario)
    for metric in (x_metric, y_metric):
        if metric not in CHART_METRICS:
            raise ValueError(f"unknown chart metric {metric!r}; known: {', '.join(CHART_METRICS)}")
    groups = official_points(
        model=model,
        scenario=scenario,
        as_of=as_of,
        run_id=run_id,
        precisions=precisions,
        hardware=hardware,
        frameworks=frameworks,
    )
    costs: dict[str, GpuCost] = {}
    # GpuCost stays outside the cache: admins edit it without an ingest bumping the generation.
    if groups and {x_metric, y_metric} & set(DERIVED_METRICS):
        gpus = {group.hardware for group in groups}
        costs = {cost.hardware: cost for cost in GpuCost.objects.filter(hardware__in=gpus)}
    return [
        _series(group, x_metric=x_metric, y_metric=y_metric, cost=costs.get(group.hardware))
        for group in groups
    ]
