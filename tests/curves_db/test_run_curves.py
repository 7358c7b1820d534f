"""run_curves / run_failed_cells: one run attempt's curves with their Pareto coverage."""

from datetime import date

import pytest

from curves.selectors import run_curves, run_failed_cells, run_measured_in
from runs import demo
from runs.models import CellStatus
from runs.selectors import run_get_latest_attempt
from tests.curves_db.builders import measure, run_on
from tests.factories import CellFactory, ConfigFactory, ImageFactory

pytestmark = pytest.mark.django_db

SEED_KEY = "dsv4/agentic-coding/mi355x/atom-disagg/fp4/p90_e2el"
SEED_VERDICT = (
    "4/5 frontier points from 5 measured bmk_agentic_* artifacts (tput_per_gpu vs p90_e2el: "
    "c16, c64, c128, c256 on the frontier; c1 is dominated by c16 at higher p90 E2EL and "
    "lower throughput)"
)
DAY = date(2026, 9, 22)


def test_seed_pr_run_reproduces_the_reviewers_check_14(demo_data):
    run = run_get_latest_attempt(run_id=demo.SEED_PR_RUN_ID)

    [curve] = run_curves(run=run)

    assert curve.key == SEED_KEY
    assert curve.coverage.status == "WARN"
    assert curve.coverage.frontier_points == 4
    assert curve.coverage.verdict == SEED_VERDICT
    assert curve.label == (
        "dsv4 / agentic-coding / cluster:mi355x-amds / fp4 / atom-disagg / "
        "rocm/atom-dev:nightly_202609221542 / p90_e2el / run 35855544139 attempt 1 "
        "(source SHA 1ed4ab45)"
    )
    # Three disagg topologies (decode EP/DPA differs with concurrency) make one curve.
    assert [point.concurrency for point in curve.points] == [1, 16, 64, 128, 256]
    assert len({point.config_id for point in curve.points}) == 3
    assert {point.topology for point in curve.points} == {"P:TP8 D:TP8", "P:TP8 D:TP8 EP8 DPA"}
    assert {point.cell_id for point in curve.points} == {
        point.ref for point in curve.coverage.frontier
    } | {entry.point.ref for entry in curve.coverage.dominated}
    assert run_failed_cells(run=run) == []


def test_cells_of_different_configs_images_and_topologies_share_a_curve():
    run = run_on(DAY, is_official=False, head_sha="ab" * 20)
    tp8 = ConfigFactory(tp=8, runner_label="b200-nv_0")
    tp4 = ConfigFactory(tp=4, ep=4, dp_attention=True, runner_label="b200-nv_1")
    measure(run, tp8, [4, 8, 16], image=ImageFactory(reference="lmsysorg/sglang:v1"))
    measure(run, tp4, [32, 64], image=ImageFactory(reference="lmsysorg/sglang:v2"))

    [curve] = run_curves(run=run)

    assert curve.key == "dsr1/1k1k/b200/sglang/fp8/median_e2el"
    assert curve.coverage.status == "PASS"
    assert [point.topology for point in curve.points] == ["TP8"] * 3 + ["TP4 EP4 DPA"] * 2
    assert curve.label == (
        "dsr1 / 1k1k / b200-nv_0, b200-nv_1 / fp8 / sglang / lmsysorg/sglang:v1, "
        f"lmsysorg/sglang:v2 / median_e2el / run {run.run_id} attempt 1 (source SHA abababab)"
    )


def test_fixed_seq_curves_split_by_spec_method_and_agentic_ones_do_not():
    run = run_on(DAY)
    plain = ConfigFactory(spec_method="none")
    mtp = ConfigFactory(spec_method="mtp", runner_label="b200-nv_1")
    for config in (plain, mtp):
        measure(run, config, [4], scenario="8k1k")
        measure(run, config, [4], scenario="agentic-coding")

    keys = [curve.key for curve in run_curves(run=run)]

    assert keys == [
        "dsr1/8k1k/b200/sglang/fp8/median_e2el",
        "dsr1/8k1k/b200/sglang/fp8/mtp/median_e2el",
        "dsr1/agentic-coding/b200/sglang/fp8/p90_e2el",
    ]


def test_ok_cells_without_usable_values_are_invalid_evidence_not_points():
    run = run_on(DAY)
    config = ConfigFactory()
    measure(run, config, [1, 2, 4, 8, 16])
    CellFactory(run=run, config=config, concurrency=32, median_e2el=None)
    CellFactory(run=run, config=config, concurrency=64, tput_per_gpu=0.0)

    [curve] = run_curves(run=run)

    coverage = curve.coverage
    assert (coverage.frontier_points, coverage.invalid_points, coverage.measured_points) == (
        5,
        2,
        7,
    )
    assert coverage.status == "WARN"  # five frontier points, but invalid evidence
    assert [(entry.point.concurrency, entry.reasons) for entry in coverage.invalid] == [
        (32, ("median_e2el is missing",)),
        (64, ("tput_per_gpu is not positive (0)",)),
    ]


def test_failed_cells_are_listed_apart_with_their_reason():
    run = run_on(DAY)
    config = ConfigFactory()
    measure(run, config, [4, 8])
    failed = CellFactory(
        run=run,
        config=config,
        concurrency=256,
        status=CellStatus.FAILED,
        failure_reason="num_requests_successful is 0",
        tput_per_gpu=None,
        median_e2el=None,
    )

    [curve] = run_curves(run=run)
    [failed_cell] = run_failed_cells(run=run)

    assert curve.coverage.measured_points == 2
    assert failed.pk not in {point.cell_id for point in curve.points}
    assert (failed_cell.cell_id, failed_cell.concurrency, failed_cell.reason) == (
        failed.pk,
        256,
        "num_requests_successful is 0",
    )
    assert failed_cell.curve_key == curve.key


def test_a_merge_that_reused_a_pr_run_is_assessed_on_the_pr_runs_cells():
    pr_run = run_on(DAY, is_official=False, head_sha="1ed4ab45" + "0" * 32)
    measure(pr_run, ConfigFactory(), [4, 8, 16])
    merge = run_on(date(2026, 9, 23), source_run=pr_run, head_sha="5499d1cc" + "0" * 32)

    [curve] = run_curves(run=merge)

    assert run_measured_in(run=merge) == pr_run
    assert [point.concurrency for point in curve.points] == [4, 8, 16]
    # The evidence lives in the PR run, so the label names that run and its SHA.
    assert curve.label.endswith(f"run {pr_run.run_id} attempt 1 (source SHA 1ed4ab45)")


def test_run_curves_reads_one_attempt_only():
    first = run_on(DAY)
    second = run_on(DAY, run_id=first.run_id, run_attempt=2)
    config = ConfigFactory()
    measure(first, config, [4])
    measure(second, config, [4, 8])

    [curve] = run_curves(run=second)

    assert [point.concurrency for point in curve.points] == [4, 8]


def test_run_curves_and_failed_cells_take_one_query_each(django_assert_num_queries):
    pr_run = run_on(DAY, is_official=False)
    for hardware, framework in (("b200", "sglang"), ("mi355x", "atom"), ("h200", "vllm")):
        for tp in (4, 8):
            config = ConfigFactory(hardware=hardware, framework=framework, tp=tp)
            image = ImageFactory(reference=f"{framework}:tp{tp}")
            measure(pr_run, config, [1 * tp, 2 * tp, 4 * tp], image=image)
            CellFactory(run=pr_run, config=config, concurrency=512, status=CellStatus.FAILED)
    merge = run_on(DAY, source_run=pr_run)
    run = run_get_latest_attempt(run_id=merge.run_id)  # loads source_run with the run

    with django_assert_num_queries(1):
        curves = run_curves(run=run)
    with django_assert_num_queries(1):
        failed = run_failed_cells(run=run)

    assert len(curves) == 3
    assert sum(curve.coverage.measured_points for curve in curves) == 18
    assert len(failed) == 6


def test_a_run_without_cells_has_no_curves():
    run = run_on(DAY)
    assert run_curves(run=run) == []
    assert run_failed_cells(run=run) == []
