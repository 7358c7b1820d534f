import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from curves.coverage import (
    RECOMMENDED_POINTS,
    CoveragePoint,
    coverage_evaluate,
    coverage_x_metric,
)
from curves.frontier import Point
from curves.identity import CurveIdentity, curve_label


def measured(concurrency, e2el_seconds, tput_per_gpu, ref=None):
    return CoveragePoint(
        concurrency=concurrency, e2el_seconds=e2el_seconds, tput_per_gpu=tput_per_gpu, ref=ref
    )


# Run 35855544139 of the seed PR: c1 sits at a higher p90 E2EL than c16 with lower throughput.
SEED_AGENTIC_CURVE = [
    measured(1, 20.5, 412.5),
    measured(16, 14.2, 5120.0),
    measured(64, 21.7, 17890.0),
    measured(128, 31.4, 29007.0),
    measured(256, 52.3, 48522.0),
]
RISING_FIXED_SEQ_CURVE = [
    measured(1, 1.0, 100.0),
    measured(2, 1.2, 180.0),
    measured(4, 1.5, 320.0),
    measured(8, 2.1, 550.0),
    measured(16, 3.4, 800.0),
]


def frontier_concurrencies(result):
    return [point.concurrency for point in result.frontier]


def test_seed_thread_verdict_is_reproduced_exactly():
    result = coverage_evaluate(SEED_AGENTIC_CURVE, scenario="agentic-coding")
    assert result.status == "WARN"
    assert result.verdict == (
        "4/5 frontier points from 5 measured bmk_agentic_* artifacts (tput_per_gpu vs p90_e2el: "
        "c16, c64, c128, c256 on the frontier; c1 is dominated by c16 at higher p90 E2EL and "
        "lower throughput)"
    )
    assert (result.frontier_points, result.measured_points, result.invalid_points) == (4, 5, 0)
    assert (result.x_metric, result.y_metric, result.recommended_points) == (
        "p90_e2el",
        "tput_per_gpu",
        5,
    )
    [dominated] = result.dominated
    assert (dominated.point.concurrency, dominated.dominated_by.concurrency) == (1, 16)


def test_exactly_five_frontier_points_pass():
    result = coverage_evaluate(RISING_FIXED_SEQ_CURVE, scenario="1k1k")
    assert result.status == "PASS"
    assert result.verdict == (
        "5/5 frontier points from 5 measured bmk_* artifacts (tput_per_gpu vs median_e2el: "
        "c1, c2, c4, c8, c16 on the frontier)"
    )


def test_four_frontier_points_warn():
    result = coverage_evaluate(RISING_FIXED_SEQ_CURVE[:4], scenario="8k1k")
    assert (result.status, result.frontier_points) == ("WARN", 4)


def test_plateau_points_count():
    plateau = [
        measured(1, 1.0, 10.0),
        measured(2, 2.0, 10.0),
        measured(4, 3.0, 10.0),
        measured(8, 4.0, 20.0),
        measured(16, 5.0, 20.0),
    ]
    result = coverage_evaluate(plateau, scenario="1k1k")
    assert (result.status, frontier_concurrencies(result)) == ("PASS", [1, 2, 4, 8, 16])


def test_identical_x_counts_only_the_best_y():
    result = coverage_evaluate(
        [measured(1, 1.0, 10.0), measured(2, 1.0, 30.0), measured(4, 1.0, 20.0)], scenario="1k1k"
    )
    assert frontier_concurrencies(result) == [2]
    assert [(entry.point.concurrency, entry.relation) for entry in result.dominated] == [
        (4, "at equal median E2EL and lower throughput"),
        (1, "at equal median E2EL and lower throughput"),
    ]


def test_identical_x_and_y_count_once():
    result = coverage_evaluate([measured(8, 2.0, 50.0), measured(4, 2.0, 50.0)], scenario="1k1k")
    assert frontier_concurrencies(result) == [4]
    assert result.verdict.endswith(
        "c4 on the frontier; c8 is dominated by c4 at equal median E2EL and equal throughput)"
    )


def test_dominated_point_names_the_closest_frontier_point_below_its_x():
    result = coverage_evaluate(
        [measured(1, 1.0, 10.0), measured(2, 2.0, 20.0), measured(4, 3.0, 30.0)]
        + [measured(3, 2.5, 5.0)],
        scenario="1k1k",
    )
    [dominated] = result.dominated
    assert dominated.dominated_by.concurrency == 2
    assert dominated.relation == "at higher median E2EL and lower throughput"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        (None, "is missing"),
        (math.nan, "is NaN"),
        ("nan", "is NaN"),
        (math.inf, "is infinite"),
        (-math.inf, "is infinite"),
        (0, "is not positive (0)"),
        (-2.5, "is not positive (-2.5)"),
        ("fast", "is not a number ('fast')"),
        (True, "is not a number (True)"),
    ],
)
@pytest.mark.parametrize("axis", ["e2el_seconds", "tput_per_gpu"])
def test_invalid_evidence_is_counted_and_forces_warn(raw, reason, axis):
    values = {"e2el_seconds": 9.0, "tput_per_gpu": 900.0} | {axis: raw}
    result = coverage_evaluate(
        [*SEED_AGENTIC_CURVE[1:], measured(512, 60.0, 50000.0), measured(8, **values)],
        scenario="agentic-coding",
    )
    metric = "p90_e2el" if axis == "e2el_seconds" else "tput_per_gpu"
    assert (result.status, result.frontier_points, result.invalid_points) == ("WARN", 5, 1)
    assert result.measured_points == 6
    assert result.invalid[0].reasons == (f"{metric} {reason}",)
    assert result.verdict == (
        "5/5 frontier points from 6 measured bmk_agentic_* artifacts (tput_per_gpu vs p90_e2el: "
        "c16, c64, c128, c256, c512 on the frontier; "
        f"1 invalid point excluded: c8 ({metric} {reason}))"
    )


def test_every_reason_of_every_invalid_point_is_listed():
    result = coverage_evaluate(
        [measured(8, None, math.nan), measured(None, 3.0, -1.0, ref="cell-17")], scenario="1k1k"
    )
    assert result.verdict == (
        "0/5 frontier points from 2 measured bmk_* artifacts (tput_per_gpu vs median_e2el: "
        "no frontier point; 2 invalid points excluded: c8 (median_e2el is missing, "
        "tput_per_gpu is NaN), cell-17 (tput_per_gpu is not positive (-1)))"
    )


def test_numbers_sent_as_strings_are_evidence():
    result = coverage_evaluate([measured(4, "1.5", "320")], scenario="1k1k")
    assert result.frontier == (Point(x=1.5, y=320.0, concurrency=4),)


def test_no_points_warns():
    result = coverage_evaluate([], scenario="1k1k")
    assert result.status == "WARN"
    assert result.verdict == (
        "0/5 frontier points from 0 measured bmk_* artifacts "
        "(tput_per_gpu vs median_e2el: no frontier point)"
    )


def test_agentic_curves_use_p90_and_fixed_seq_curves_the_median():
    assert coverage_x_metric("agentic-coding") == "p90_e2el"
    assert coverage_x_metric("1k1k") == "median_e2el"
    assert coverage_x_metric("8k1k") == "median_e2el"


# Mostly small positive numbers, so ties, plateaus and long frontiers are common.
usable_values = st.integers(1, 8).map(float)
raw_values = st.one_of(
    usable_values,
    usable_values,
    usable_values.map(str),
    st.none(),
    st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -1.0, "fast", True]),
    st.floats(),
)
curves = st.lists(
    st.builds(
        CoveragePoint,
        concurrency=st.none() | st.integers(1, 4),
        e2el_seconds=raw_values,
        tput_per_gpu=raw_values,
        ref=st.sampled_from([None, "a", "b"]),
    ),
    max_size=20,
)


def usable(value):
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) and number > 0 else None


def dominates(better, worse):
    return better.x <= worse.x and better.y > worse.y


@given(points=curves)
def test_frontier_and_dominated_points_are_exactly_the_valid_points(points):
    result = coverage_evaluate(points, scenario="1k1k")
    valid = [
        Point(
            x=usable(p.e2el_seconds), y=usable(p.tput_per_gpu), concurrency=p.concurrency, ref=p.ref
        )
        for p in points
        if usable(p.e2el_seconds) is not None and usable(p.tput_per_gpu) is not None
    ]
    assessed = [*result.frontier, *(entry.point for entry in result.dominated)]
    assert sorted(map(repr, assessed)) == sorted(map(repr, valid))
    assert result.invalid_points == len(points) - len(valid)
    assert result.measured_points == len(points)


@given(points=curves)
def test_no_frontier_point_dominates_another(points):
    frontier = coverage_evaluate(points, scenario="1k1k").frontier
    assert not any(dominates(a, b) for a in frontier for b in frontier)
    xs = [point.x for point in frontier]
    assert all(left < right for left, right in zip(xs, xs[1:], strict=False))


@given(points=curves)
def test_every_excluded_valid_point_is_dominated_by_a_frontier_point(points):
    result = coverage_evaluate(points, scenario="agentic-coding")
    for entry in result.dominated:
        point, by = entry.point, entry.dominated_by
        assert by in result.frontier
        assert dominates(by, point) or (by.x, by.y) == (point.x, point.y)
        latency = "higher" if point.x > by.x else "equal"
        throughput = "lower" if point.y < by.y else "equal"
        assert entry.relation == f"at {latency} p90 E2EL and {throughput} throughput"


@given(points=curves, data=st.data())
def test_result_does_not_depend_on_input_order(points, data):
    shuffled = data.draw(st.permutations(points))
    # repr, because NaN evidence never compares equal to itself.
    assert repr(coverage_evaluate(shuffled, scenario="agentic-coding")) == repr(
        coverage_evaluate(points, scenario="agentic-coding")
    )
    assert coverage_evaluate(shuffled, scenario="1k1k").verdict == (
        coverage_evaluate(points, scenario="1k1k").verdict
    )


@given(points=curves)
def test_status_passes_only_with_enough_frontier_points_and_no_invalid_evidence(points):
    result = coverage_evaluate(points, scenario="1k1k")
    passes = result.frontier_points >= RECOMMENDED_POINTS and result.invalid_points == 0
    assert result.status == ("PASS" if passes else "WARN")


def test_seed_thread_check_14_curve_line_is_reproduced_exactly():
    identity = CurveIdentity(
        model="dsv4",
        scenario="agentic-coding",
        hardware="mi355x",
        framework="atom-disagg",
        precision="fp4",
    )
    label = curve_label(
        identity,
        x_metric="p90_e2el",
        runner_label="cluster:mi355x-amds",
        images=["rocm/atom-dev:nightly_202609221542"],
        run_id=35855544139,
        attempt=1,
        source_sha="1ed4ab45c0ffee0000000000000000000000beef",
    )
    verdict = coverage_evaluate(SEED_AGENTIC_CURVE, scenario="agentic-coding").verdict
    assert f"curve {label}: {verdict}" == (
        "curve dsv4 / agentic-coding / cluster:mi355x-amds / fp4 / atom-disagg / "
        "rocm/atom-dev:nightly_202609221542 / p90_e2el / run 35855544139 attempt 1 "
        "(source SHA 1ed4ab45): 4/5 frontier points from 5 measured bmk_agentic_* artifacts "
        "(tput_per_gpu vs p90_e2el: c16, c64, c128, c256 on the frontier; c1 is dominated by c16 "
        "at higher p90 E2EL and lower throughput)"
    )
