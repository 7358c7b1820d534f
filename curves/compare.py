"""A run's points against the official frontier: the official throughput at the same latency.

Pure functions over curves.frontier Points (x: a latency, lower is better; y: a throughput,
higher is better). The official frontier of such a curve, sorted by x ascending, never falls:
each kept point beats the best y of every point at lower latency (curves.frontier). Between
two frontier points the chart draws a straight line, and that line is what a reader compares a
point with, so the official value at a latency is read off it by linear interpolation. Outside
the frontier's latency range there is no official measurement to compare with: None, never an
extrapolation.
"""

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass

from curves.frontier import Point


def official_throughput_at(frontier_points: Sequence[Point], *, x: float) -> float | None:
    """y on the frontier's line at latency x; None when x is outside the frontier's x range.

    frontier_points: one frontier sorted by x ascending with distinct x (as curves.frontier
    returns it); y is assumed not to fall with x, so the result lies between its neighbours' y.
    """
    if not frontier_points or not frontier_points[0].x <= x <= frontier_points[-1].x:
        return None
    index = bisect_left([point.x for point in frontier_points], x)
    right = frontier_points[index]
    if right.x == x:
        return right.y
    left = frontier_points[index - 1]
    share = (x - left.x) / (right.x - left.x)
    return left.y + share * (right.y - left.y)


def best_official_throughput_at(frontiers: Sequence[Sequence[Point]], *, x: float) -> float | None:
    """The best official_throughput_at over several official series (e.g. one per speculative
    method of the same GPU and engine); None when x is outside all of them."""
    values = [official_throughput_at(frontier, x=x) for frontier in frontiers]
    known = [value for value in values if value is not None]
    return max(known) if known else None


@dataclass(frozen=True, kw_only=True)
class PointChange:
    """One run point against the official frontier at its latency."""

    point: Point  # the run's point (its ref is handed back untouched)
    official_y: float | None  # None: no official frontier spans its latency
    ratio: float | None  # point.y / official_y: above 1 beats the official curve

    @property
    def percent(self) -> float | None:
        """The change in percent, e.g. +12.5 for a ratio of 1.125."""
        return None if self.ratio is None else (self.ratio - 1) * 100


def point_changes(
    points: Sequence[Point], *, official_frontiers: Sequence[Sequence[Point]]
) -> list[PointChange]:
    """Each point with the best official throughput at its latency and its ratio to it."""
    changes = []
    for point in points:
        official_y = best_official_throughput_at(official_frontiers, x=point.x)
        ratio = point.y / official_y if official_y else None
        changes.append(PointChange(point=point, official_y=official_y, ratio=ratio))
    return changes


@dataclass(frozen=True, kw_only=True)
class OfficialFrontier:
    """The frontier of one official chart series, with what identifies the series."""

    hardware: str
    framework: str
    precision: str
    label: str  # the series' legend label
    points: tuple[Point, ...]  # sorted by x ascending


@dataclass(frozen=True, kw_only=True)
class Baseline:
    """The official series a run's curve is compared with."""

    frontiers: tuple[OfficialFrontier, ...]
    same_framework: bool  # False: no official series of the run's engine, so the GPU's best

    @property
    def labels(self) -> list[str]:
        return [frontier.label for frontier in self.frontiers]


def baseline_choose(
    official: Sequence[OfficialFrontier], *, hardware: str, framework: str, precision: str
) -> Baseline:
    """The official series of the same GPU, engine and precision; when the engine has none
    (a new engine's first PR), those of the same GPU and precision, so the run is still
    measured against the best official result on its hardware."""
    same_gpu = [f for f in official if (f.hardware, f.precision) == (hardware, precision)]
    same_framework = [f for f in same_gpu if f.framework == framework]
    if same_framework:
        return Baseline(frontiers=tuple(same_framework), same_framework=True)
    return Baseline(frontiers=tuple(same_gpu), same_framework=False)
