"""Pareto coverage of one curve, as reviewers assess it (REFERENCE §4, PR check 14).

y is tput_per_gpu (higher is better), x the end-to-end latency in seconds (lower is better):
median_e2el for fixed-sequence scenarios, p90_e2el for agentic ones. A curve PASSes with at least
RECOMMENDED_POINTS frontier points and no invalid evidence; anything else is a WARN.
"""

import math
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from curves.frontier import Point, frontier_partition, tie_break_key

AGENTIC_SCENARIO = "agentic-coding"
RECOMMENDED_POINTS = 5
Y_METRIC = "tput_per_gpu"
_X_METRIC_LABELS = {"median_e2el": "median E2EL", "p90_e2el": "p90 E2EL"}


def coverage_x_metric(scenario: str) -> str:
    return "p90_e2el" if scenario == AGENTIC_SCENARIO else "median_e2el"


@dataclass(frozen=True, kw_only=True)
class CoveragePoint:
    """One measured artifact of a curve, with its values as they arrived (None, NaN, "12.5"...)."""

    concurrency: int | None
    e2el_seconds: float | str | None  # the scenario's coverage_x_metric
    tput_per_gpu: float | str | None
    ref: object = None


@dataclass(frozen=True, kw_only=True)
class InvalidPoint:
    point: CoveragePoint
    reasons: tuple[str, ...]  # e.g. ("p90_e2el is missing",)


@dataclass(frozen=True, kw_only=True)
class DominatedPoint:
    point: Point
    dominated_by: Point  # the frontier point with the closest x at or below point.x
    relation: str  # how point compares with it, e.g. "at higher p90 E2EL and lower throughput"


def _label(point: Point | CoveragePoint) -> str:
    return f"c{point.concurrency}" if point.concurrency is not None else str(point.ref)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


@dataclass(frozen=True, kw_only=True)
class CoverageResult:
    scenario: str
    frontier: tuple[Point, ...]  # ascending x
    dominated: tuple[DominatedPoint, ...]  # ascending x
    invalid: tuple[InvalidPoint, ...]

    @property
    def x_metric(self) -> str:
        return coverage_x_metric(self.scenario)

    @property
    def y_metric(self) -> str:
        return Y_METRIC

    @property
    def recommended_points(self) -> int:
        return RECOMMENDED_POINTS

    @property
    def frontier_points(self) -> int:
        return len(self.frontier)

    @property
    def invalid_points(self) -> int:
        return len(self.invalid)

    @property
    def measured_points(self) -> int:
        return len(self.frontier) + len(self.dominated) + len(self.invalid)

    @property
    def status(self) -> str:
        passes = self.frontier_points >= RECOMMENDED_POINTS and not self.invalid
        return "PASS" if passes else "WARN"

    @property
    def verdict(self) -> str:
        """The sentence reviewers write, e.g. "4/5 frontier points from 5 measured ... artifacts
        (tput_per_gpu vs p90_e2el: c16, c64 on the frontier; c1 is dominated by c16 at ...)"."""
        artifacts = "bmk_agentic_*" if self.scenario == AGENTIC_SCENARIO else "bmk_*"
        on_frontier = ", ".join(_label(point) for point in self.frontier)
        details = [f"{on_frontier} on the frontier" if self.frontier else "no frontier point"]
        details += [
            f"{_label(entry.point)} is dominated by {_label(entry.dominated_by)} {entry.relation}"
            for entry in self.dominated
        ]
        if self.invalid:
            excluded = ", ".join(
                f"{_label(entry.point)} ({', '.join(entry.reasons)})" for entry in self.invalid
            )
            details.append(f"{_plural(self.invalid_points, 'invalid point')} excluded: {excluded}")
        measured = _plural(self.measured_points, f"measured {artifacts} artifact")
        return (
            f"{self.frontier_points}/{RECOMMENDED_POINTS} frontier points from {measured} "
            f"({Y_METRIC} vs {self.x_metric}: {'; '.join(details)})"
        )


def _evidence(value: float | str | None, *, metric: str) -> tuple[float | None, str | None]:
    """(the value as a number, None) when it is usable evidence, else (None, why not)."""
    if value is None:
        return None, f"{metric} is missing"
    # bool is an int subclass, but a flag in a metric column is a data error, not 1.0.
    if isinstance(value, bool):
        return None, f"{metric} is not a number ({value!r})"
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None, f"{metric} is not a number ({value!r})"
    if math.isnan(number):
        return None, f"{metric} is NaN"
    if math.isinf(number):
        return None, f"{metric} is infinite"
    if number <= 0:
        return None, f"{metric} is not positive ({number:g})"
    return number, None


def _relation(point: Point, dominated_by: Point, *, x_label: str) -> str:
    latency = "higher" if point.x > dominated_by.x else "equal"
    throughput = "lower" if point.y < dominated_by.y else "equal"
    return f"at {latency} {x_label} and {throughput} throughput"


def coverage_evaluate(points: Iterable[CoveragePoint], *, scenario: str) -> CoverageResult:
    """Assess one curve's measured points; the result does not depend on their order."""
    x_metric = coverage_x_metric(scenario)
    valid: list[Point] = []
    invalid: list[InvalidPoint] = []
    for measured in points:
        e2el, e2el_problem = _evidence(measured.e2el_seconds, metric=x_metric)
        tput, tput_problem = _evidence(measured.tput_per_gpu, metric=Y_METRIC)
        if e2el is None or tput is None:
            reasons = tuple(problem for problem in (e2el_problem, tput_problem) if problem)
            invalid.append(InvalidPoint(point=measured, reasons=reasons))
        else:
            valid.append(Point(x=e2el, y=tput, concurrency=measured.concurrency, ref=measured.ref))
    on_frontier, off_frontier = frontier_partition(valid, maximise_x=False, maximise_y=True)
    # Frontier x values rise strictly and their y never falls, so the frontier point with the
    # largest x not above an excluded point's x also has the best y there: it dominates that point.
    frontier_xs = [point.x for point in on_frontier]
    dominated = []
    for point in off_frontier:
        dominated_by = on_frontier[bisect_right(frontier_xs, point.x) - 1]
        relation = _relation(point, dominated_by, x_label=_X_METRIC_LABELS[x_metric])
        dominated.append(DominatedPoint(point=point, dominated_by=dominated_by, relation=relation))
    invalid.sort(
        key=lambda entry: (
            tie_break_key(concurrency=entry.point.concurrency, ref=entry.point.ref),
            repr(entry.point.e2el_seconds),
            repr(entry.point.tput_per_gpu),
        )
    )
    return CoverageResult(
        scenario=scenario,
        frontier=tuple(on_frontier),
        dominated=tuple(dominated),
        invalid=tuple(invalid),
    )
