"""Pareto frontiers of chart points, in any of the four axis orientations.

One rule serves the charts and the coverage check (REFERENCE §4), so the line a chart draws is
the frontier reviewers count: walk the points from the best x to the worst, keep a point when its
y beats the best y so far, or equals it at a worse x (plateaus count); at identical x only the
best y counts, once. Equivalently: a finite point is on the frontier unless another point is at
least as good on x and strictly better on y, or it repeats the (x, y) of a point sorting before it.
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass

_LATENCY_METRICS = ("ttft", "tpot", "itl", "e2el")
_STATISTICS = ("mean", "median", "p90", "p99")

# True when a higher value is better.
METRIC_DIRECTIONS: dict[str, bool] = {
    "tput_per_gpu": True,
    "output_tput_per_gpu": True,
    "input_tput_per_gpu": True,
    "cost_per_million_tokens": False,
    "tokens_per_mw": True,
    **{f"{stat}_{latency}": False for stat in _STATISTICS for latency in _LATENCY_METRICS},
    **{f"{stat}_intvty": True for stat in _STATISTICS},
}


@dataclass(frozen=True, kw_only=True)
class Point:
    x: float
    y: float
    concurrency: int | None = None
    ref: object = None  # handed back untouched: a cell id or whatever the caller needs


def tie_break_key(*, concurrency: int | None, ref: object) -> tuple:
    """Order for points that tie on their values: by concurrency (unknown last), then by ref."""
    # repr makes refs of any type comparable, so the order never depends on the input order.
    return (concurrency is None, concurrency or 0, repr(ref))


def higher_is_better(metric: str) -> bool:
    try:
        return METRIC_DIRECTIONS[metric]
    except KeyError:
        raise ValueError(f"unknown metric {metric!r}; known: {sorted(METRIC_DIRECTIONS)}") from None


def frontier_partition(
    points: Iterable[Point], *, maximise_x: bool, maximise_y: bool
) -> tuple[list[Point], list[Point]]:
    """Split the finite points into (frontier sorted by x ascending, the rest in walk order).

    Points with a non-finite x or y are in neither list.
    """
    # Signs turn every orientation into "x lower is better, y higher is better".
    x_sign = -1.0 if maximise_x else 1.0
    y_sign = 1.0 if maximise_y else -1.0
    walk = sorted(
        (point for point in points if math.isfinite(point.x) and math.isfinite(point.y)),
        key=lambda point: (
            x_sign * point.x,
            -y_sign * point.y,
            tie_break_key(concurrency=point.concurrency, ref=point.ref),
        ),
    )
    on_frontier: list[Point] = []
    off_frontier: list[Point] = []
    for point in walk:
        # The last kept point holds the best y so far and the worst x kept so far.
        best = on_frontier[-1] if on_frontier else None
        if (
            best is None
            or y_sign * point.y > y_sign * best.y
            or (point.y == best.y and point.x != best.x)
        ):
            on_frontier.append(point)
        else:
            off_frontier.append(point)
    on_frontier.sort(key=lambda point: point.x)
    return on_frontier, off_frontier


def frontier(points: Iterable[Point], *, maximise_x: bool, maximise_y: bool) -> list[Point]:
    """The Pareto frontier sorted by x ascending; non-finite points are ignored."""
    return frontier_partition(points, maximise_x=maximise_x, maximise_y=maximise_y)[0]


def frontier_for_metrics(points: Iterable[Point], *, x_metric: str, y_metric: str) -> list[Point]:
    """The frontier of points whose x and y hold the named metrics (see METRIC_DIRECTIONS)."""
    return frontier(
        points, maximise_x=higher_is_better(x_metric), maximise_y=higher_is_better(y_metric)
    )
