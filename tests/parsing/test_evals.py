import pytest

from runs.parsing import parse_artifact
from runs.parsing.records import ArtifactError, ArtifactKind
from tests.parsing.conftest import FIXED_RF, encode, fixture_json

EVAL_NAME = f"eval_dsv4_8k1k_{FIXED_RF}"
STAMP = "2026-08-21T14-55-02.123456"


def eval_files(meta: dict, results: dict[str, dict]) -> dict[str, bytes]:
    files = {f"eval/{name}": encode(document) for name, document in results.items()}
    return {"eval/meta_env.json": encode(meta), **files}


def test_per_config_eval(meta_env, lm_eval_results):
    parse = parse_artifact(
        EVAL_NAME, eval_files(meta_env, {f"results_{STAMP}.json": lm_eval_results})
    )
    assert parse.kind is ArtifactKind.EVAL and parse.result_name == FIXED_RF
    (record,) = parse.evals
    assert record.task == "gsm8k" and record.n_shot == 5 and record.n_eff == 1319
    assert (record.em_strict, record.em_strict_se) == (0.9522, 0.0059)
    assert (record.em_flexible, record.em_flexible_se) == (0.9553, 0.0057)
    assert (record.score, record.score_name, record.score_se) == (0.9522, "em_strict", 0.0059)
    assert record.lm_eval_version == "0.4.9.1"
    assert (record.scenario, record.isl, record.osl, record.concurrency) == ("8k1k", 8192, 1024, 64)
    assert record.image == "lmsysorg/sglang:v0.5.12-rocm700-mi35x"
    assert record.source == f"{EVAL_NAME}/eval/results_{STAMP}.json"
    config = record.config
    assert (config.model_prefix, config.hardware, config.runner_label) == (
        "dsv4",
        "mi355x",
        "mi355x-amds_03",
    )
    assert (config.tp, config.pp, config.ep, config.dp_attention, config.disagg) == (
        8,
        1,
        1,
        False,
        False,
    )


def test_eval_identity_matches_the_benchmark_row(meta_env, lm_eval_results, fixed_row):
    """Cells and evals of one setup must land on one Config."""
    bench = parse_artifact(f"bmk_{FIXED_RF}", {f"agg_{FIXED_RF}.json": encode(fixed_row)})
    meta_env["hw"] = fixed_row["hw"]
    parse = parse_artifact(
        EVAL_NAME, eval_files(meta_env, {f"results_{STAMP}.json": lm_eval_results})
    )
    assert parse.evals[0].config == bench.cells[0].config


def test_newest_results_file_wins(meta_env, lm_eval_results):
    older = {**lm_eval_results, "results": {"gsm8k": {"exact_match,strict-match": 0.5}}}
    files = eval_files(
        meta_env,
        {
            "results_2026-08-20T10-00-00.000001.json": older,
            f"results_{STAMP}.json": lm_eval_results,
        },
    )
    (record,) = parse_artifact(EVAL_NAME, files).evals
    assert record.em_strict == 0.9522


def test_batched_concurrencies_keep_newest_each(meta_env, lm_eval_results):
    meta = {**meta_env, "eval_concs": [4, 16], "completed_eval_concs": [4, 16]}
    low = {**lm_eval_results, "results": {"gsm8k": {"exact_match,strict-match": 0.1}}}
    files = eval_files(
        meta,
        {
            "results_2026-08-20T10-00-00.1_conc4.json": low,
            "results_2026-08-21T10-00-00.1_conc4.json": lm_eval_results,
            "results_2026-08-21T10-00-00.1_conc16.json": lm_eval_results,
        },
    )
    parse = parse_artifact(EVAL_NAME, files)
    assert [(record.concurrency, record.em_strict) for record in parse.evals] == [
        (4, 0.9522),
        (16, 0.9522),
    ]
    assert parse.row_errors == []


def test_batched_concurrencies_not_completed_are_left_out(meta_env, lm_eval_results):
    meta = {
        **meta_env,
        "eval_exit_code": 1,
        "completed_eval_concs": ["4", 8],
        "failed_eval_concs": [16],
    }
    files = eval_files(
        meta,
        {
            "results_2026-08-21T10-00-00.1_conc4.json": lm_eval_results,
            "results_2026-08-21T10-00-00.1_conc16.json": lm_eval_results,
        },
    )
    parse = parse_artifact(EVAL_NAME, files)
    assert [record.concurrency for record in parse.evals] == [4]
    assert parse.row_errors == [
        f"{EVAL_NAME}: conc 16 is not in completed_eval_concs",
        f"{EVAL_NAME}: conc 8 completed but has no results file",
    ]


def test_failed_single_eval_is_skipped(lm_eval_results):
    files = eval_files({"eval_exit_code": 7, "conc": 4}, {})
    parse = parse_artifact(EVAL_NAME, files)
    assert parse.skipped_reason == "eval failed (eval_exit_code=7)" and parse.evals == []


def test_task_without_exact_match_uses_first_numeric_metric(meta_env):
    results = {
        "results": {
            "gpqa": {
                "alias": "gpqa",
                "acc,none": 0.42,
                "acc_stderr,none": 0.03,
                "acc_norm,none": 0.5,
            }
        },
        "n-shot": {"gpqa": 0},
    }
    (record,) = parse_artifact(EVAL_NAME, eval_files(meta_env, {"results_x.json": results})).evals
    assert (record.score, record.score_name, record.score_se) == (0.42, "acc,none", 0.03)
    assert record.em_strict is None and record.n_shot == 0 and record.n_eff is None


def test_flexible_only_is_the_score(meta_env):
    results = {"results": {"gsm8k": {"exact_match,flexible-extract": 0.8}}}
    (record,) = parse_artifact(EVAL_NAME, eval_files(meta_env, {"results_x.json": results})).evals
    assert (record.score, record.score_name) == (0.8, "em_flexible")


def test_stderr_not_available_is_an_invalid_metric(meta_env, lm_eval_results):
    lm_eval_results["results"]["gsm8k"]["exact_match_stderr,strict-match"] = "N/A"
    lm_eval_results["n-samples"]["gsm8k"]["effective"] = 13.5
    (record,) = parse_artifact(
        EVAL_NAME, eval_files(meta_env, {"results_x.json": lm_eval_results})
    ).evals
    assert record.em_strict_se is None and record.score_se is None
    assert "expected a number" in record.invalid_metrics["em_strict_se"]
    assert record.n_eff is None and record.invalid_metrics["n_eff"] == "not a whole number (13.5)"


def test_disagg_from_the_result_name_when_metadata_lacks_it(meta_env, lm_eval_results):
    meta = {
        **meta_env,
        "is_multinode": True,
        "prefill_tp": 4,
        "prefill_ep": 1,
        "prefill_num_workers": 1,
        "decode_tp": 8,
        "decode_ep": 1,
        "decode_num_workers": 2,
    }
    name = (
        "eval_dsr1_1k1k_dsr1_1k1k_fp8_dynamo-sglang_prefill-tp4-nw1_decode-tp8-nw2"
        "_disagg-true_spec-none_conc4x16_gb200-nv"
    )
    (record,) = parse_artifact(name, eval_files(meta, {"results_x.json": lm_eval_results})).evals
    config = record.config
    assert config.disagg and config.multinode and config.tp is None
    assert (config.prefill_gpus, config.decode_gpus, config.decode_workers) == (4, 16, 2)


def test_scenario_from_the_name_when_lengths_are_absent(meta_env, lm_eval_results):
    del meta_env["isl"], meta_env["osl"]
    name = f"eval_dsv4_1k8k_{FIXED_RF.replace('8k1k', '1k8k')}"
    (record,) = parse_artifact(
        name, eval_files(meta_env, {"results_x.json": lm_eval_results})
    ).evals
    assert (record.scenario, record.isl, record.osl) == ("1k8k", 1024, 8192)


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ({}, "no results_\\*.json file"),
        ({"results_x.json": {"no": "results"}}, "with a 'results' object"),
        ({"results_x.json": {"results": {"gsm8k": 0.9}}}, "results\\['gsm8k'\\] is not an object"),
        ({"results_x.json": {"results": {}}}, "with a 'results' object"),
        ({"results_x.json": {"results": {"t": {}}, "lm_eval_version": 4}}, "lm_eval_version"),
    ],
)
def test_bad_eval_artifact(meta_env, results, message):
    with pytest.raises(ArtifactError, match=message):
        parse_artifact(EVAL_NAME, eval_files(meta_env, results))


def test_eval_without_meta_env_is_an_artifact_error(lm_eval_results):
    with pytest.raises(ArtifactError, match="meta_env.json not found"):
        parse_artifact(EVAL_NAME, {"results_x.json": encode(lm_eval_results)})


@pytest.mark.parametrize(
    ("field", "value"), [("hw", None), ("framework", 5), ("completed_eval_concs", "4 16")]
)
def test_eval_bad_metadata_is_an_artifact_error(meta_env, lm_eval_results, field, value):
    meta_env[field] = value
    with pytest.raises(ArtifactError, match=field):
        parse_artifact(EVAL_NAME, eval_files(meta_env, {"results_x.json": lm_eval_results}))


def test_eval_aggregate_example():
    rows = fixture_json("agg_eval_all.json")
    parse = parse_artifact("eval_results_all", {"agg_eval_all.json": encode(rows)})
    assert parse.kind is ArtifactKind.EVAL_AGGREGATE and parse.row_errors == []
    (record,) = parse.evals
    assert (record.task, record.concurrency, record.scenario) == ("gsm8k", 64, "8k1k")
    assert (record.score_name, record.n_eff) == ("em_strict", 1319)
    assert record.em_flexible == pytest.approx(0.9552691432903715)
    assert (record.config.hardware, record.config.runner_label) == ("mi355x", "MI355X")
    assert record.config.prefill_tp is None  # single node: v1 topology only


def test_eval_aggregate_skips_bad_rows():
    (row,) = fixture_json("agg_eval_all.json")
    rows = [row, {**row, "task": None}, {**row, "em_strict": float("nan")}]
    parse = parse_artifact("eval_results_all", {"agg_eval_all.json": encode(rows)})
    assert len(parse.evals) == 2
    assert parse.row_errors == ["eval_results_all/agg_eval_all.json row 1: field 'task': missing"]
    assert parse.evals[1].em_strict is None and parse.evals[1].invalid_metrics == {
        "em_strict": "NaN"
    }


def test_eval_aggregate_must_be_an_array():
    with pytest.raises(ArtifactError, match="expected a JSON array"):
        parse_artifact("eval_results_all", {"agg_eval_all.json": b"{}"})
