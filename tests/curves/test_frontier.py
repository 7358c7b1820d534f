import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from curves.frontier import (
    METRIC_DIRECTIONS,
    Point,
    frontier,
    frontier_for_metrics,
    higher_is_better,
)

ORIENTATIONS = [(False, True), (False, False), (True, True), (True, False)]

# Small integers make ties and plateaus common; the odd non-finite or arbitrary float keeps the
# rest honest.
coordinates = st.one_of(
    st.integers(-4, 4).map(float),
    st.sampled_from([math.nan, math.inf, -math.inf]),
    st.floats(allow_nan=True, allow_infinity=True),
)
points = st.lists(
    st.builds(
        Point,
        x=coordinates,
        y=coordinates,
        concurrency=st.none() | st.integers(1, 3),
        ref=st.sampled_from([None, "a", "b", 7]),
    ),
    max_size=25,
)


def brute_force_frontier(candidates, *, maximise_x, maximise_y):
    """The frontier straight from its definition: nothing at least as good on x is strictly
    better on y, and of points with identical (x, y) only the first by (concurrency, ref) counts."""
    finite = [p for p in candidates if math.isfinite(p.x) and math.isfinite(p.y)]

    def beats(other, point):
        x_as_good = other.x >= point.x if maximise_x else other.x <= point.x
        y_better = other.y > point.y if maximise_y else other.y < point.y
        return x_as_good and y_better

    def tie_key(point):
        return (point.concurrency is None, point.concurrency or 0, repr(point.ref))

    kept = []
    for point in finite:
        if any(beats(other, point) for other in finite):
            continue
        twins = [other for other in finite if (other.x, other.y) == (point.x, point.y)]
        if point == min(twins, key=tie_key) and point not in kept:
            kept.append(point)
    return sorted(kept, key=lambda point: point.x)


@pytest.mark.parametrize(("maximise_x", "maximise_y"), ORIENTATIONS)
@given(candidates=points)
def test_frontier_matches_brute_force_in_every_orientation(candidates, maximise_x, maximise_y):
    assert frontier(candidates, maximise_x=maximise_x, maximise_y=maximise_y) == (
        brute_force_frontier(candidates, maximise_x=maximise_x, maximise_y=maximise_y)
    )


@pytest.mark.parametrize(("maximise_x", "maximise_y"), ORIENTATIONS)
@given(candidates=points, data=st.data())
def test_frontier_does_not_depend_on_input_order(candidates, data, maximise_x, maximise_y):
    shuffled = data.draw(st.permutations(candidates))
    assert frontier(shuffled, maximise_x=maximise_x, maximise_y=maximise_y) == frontier(
        candidates, maximise_x=maximise_x, maximise_y=maximise_y
    )


@pytest.mark.parametrize(("maximise_x", "maximise_y"), ORIENTATIONS)
@given(candidates=points)
def test_frontier_is_sorted_by_strictly_rising_x(candidates, maximise_x, maximise_y):
    xs = [p.x for p in frontier(candidates, maximise_x=maximise_x, maximise_y=maximise_y)]
    assert all(left < right for left, right in zip(xs, xs[1:], strict=False))


def test_each_orientation_keeps_its_own_side():
    low_x_low_y, low_x_high_y = Point(x=1, y=2), Point(x=2, y=9)
    high_x_low_y, high_x_high_y = Point(x=8, y=1), Point(x=9, y=8)
    candidates = [low_x_low_y, low_x_high_y, high_x_low_y, high_x_high_y]
    assert frontier(candidates, maximise_x=False, maximise_y=True) == [low_x_low_y, low_x_high_y]
    assert frontier(candidates, maximise_x=False, maximise_y=False) == [low_x_low_y, high_x_low_y]
    assert frontier(candidates, maximise_x=True, maximise_y=True) == [low_x_high_y, high_x_high_y]
    assert frontier(candidates, maximise_x=True, maximise_y=False) == [high_x_low_y, high_x_high_y]


def test_plateau_points_stay_on_the_frontier_in_every_orientation():
    plateau = [Point(x=1, y=5), Point(x=2, y=5), Point(x=3, y=5)]
    for maximise_x, maximise_y in ORIENTATIONS:
        assert frontier(plateau, maximise_x=maximise_x, maximise_y=maximise_y) == plateau


def test_non_finite_points_are_ignored():
    candidates = [Point(x=math.nan, y=100), Point(x=1, y=math.inf), Point(x=2, y=3)]
    assert frontier(candidates, maximise_x=False, maximise_y=True) == [Point(x=2, y=3)]


def test_identical_values_keep_the_lowest_concurrency_then_ref():
    twins = [
        Point(x=1, y=2, concurrency=None, ref="a"),
        Point(x=1, y=2, concurrency=8, ref="b"),
        Point(x=1, y=2, concurrency=8, ref="a"),
    ]
    assert frontier(twins, maximise_x=False, maximise_y=True) == [twins[2]]


def test_metric_directions_cover_the_chart_metrics():
    for metric in ["tput_per_gpu", "output_tput_per_gpu", "input_tput_per_gpu", "tokens_per_mw"]:
        assert METRIC_DIRECTIONS[metric] is True
    assert METRIC_DIRECTIONS["cost_per_million_tokens"] is False
    for stat in ["median", "p90", "p99"]:
        for latency in ["ttft", "tpot", "itl", "e2el"]:
            assert METRIC_DIRECTIONS[f"{stat}_{latency}"] is False
        assert METRIC_DIRECTIONS[f"{stat}_intvty"] is True


def test_frontier_for_metrics_orients_each_axis_by_its_metric():
    candidates = [Point(x=10, y=100), Point(x=20, y=300), Point(x=30, y=200)]
    # Latency down, throughput up: both trade-off points count.
    assert frontier_for_metrics(candidates, x_metric="p90_e2el", y_metric="tput_per_gpu") == [
        Point(x=10, y=100),
        Point(x=20, y=300),
    ]
    # Interactivity up, throughput up: the best x and the best y trade off.
    assert frontier_for_metrics(candidates, x_metric="median_intvty", y_metric="tput_per_gpu") == [
        Point(x=20, y=300),
        Point(x=30, y=200),
    ]
    # Throughput up, cost down.
    assert frontier_for_metrics(
        candidates, x_metric="tput_per_gpu", y_metric="cost_per_million_tokens"
    ) == [Point(x=10, y=100), Point(x=30, y=200)]


def test_unknown_metric_is_rejected():
    with pytest.raises(ValueError, match="unknown metric 'p42_e2el'"):
        higher_is_better("p42_e2el")
    with pytest.raises(ValueError, match="unknown metric"):
        frontier_for_metrics([], x_metric="p42_e2el", y_metric="tput_per_gpu")
