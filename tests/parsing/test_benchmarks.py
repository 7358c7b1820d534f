import pytest

from runs.parsing import parse_artifact
from runs.parsing.benchmarks import AGENTIC_METRIC_PATHS
from runs.parsing.records import INDEXED_METRICS, ArtifactError, ArtifactKind, UnmappedKind
from tests.parsing.conftest import AGENTIC_RF, FIXED_RF, encode


def parse_fixed(row, member=None):
    return parse_artifact(f"bmk_{FIXED_RF}", {member or f"agg_{FIXED_RF}.json": encode(row)})


def parse_agentic(row, member=None):
    return parse_artifact(
        f"bmk_agentic_{AGENTIC_RF}", {member or f"{AGENTIC_RF}.json": encode(row)}
    )


def test_agentic_paths_cover_every_indexed_metric():
    assert set(AGENTIC_METRIC_PATHS) == set(INDEXED_METRICS)


def test_fixed_seq_example(fixed_row):
    parse = parse_fixed(fixed_row)
    assert parse.kind is ArtifactKind.FIXED_SEQ
    assert parse.result_name == FIXED_RF
    assert parse.unmapped == [] and parse.row_errors == []
    (cell,) = parse.cells
    config = cell.config
    assert (config.model_prefix, config.hardware, config.framework, config.precision) == (
        "dsv4",
        "mi355x",
        "sglang",
        "fp4",
    )
    assert (config.tp, config.pp, config.dcp, config.pcp, config.ep) == (8, 1, 1, 1, 1)
    assert config.dp_attention is False and config.disagg is False and config.prefill_tp is None
    assert (cell.scenario, cell.isl, cell.osl, cell.concurrency) == ("8k1k", 8192, 1024, 64)
    assert cell.image == "lmsysorg/sglang:v0.5.12-rocm700-mi35x"
    assert cell.recipe_fingerprint.startswith("3f9c1a0b7d2e4c56")
    assert cell.metrics["tput_per_gpu"] == pytest.approx(3077.5333985011403)
    assert cell.metrics["median_e2el"] == 20.7881
    assert cell.metrics["num_requests_total"] is None
    assert set(cell.metrics) == set(INDEXED_METRICS)
    assert cell.extra_metrics["mean_ttft"] == 1.8934
    assert cell.extra_metrics["p99.9_e2el"] == 29.112
    assert cell.extra_metrics["power_valid"] == 0
    assert "tp" not in cell.extra_metrics and "isl" not in cell.extra_metrics
    assert cell.failure_reason == "" and cell.invalid_metrics == {}


def test_fixed_seq_inside_a_folder_and_multinode_parts(fixed_row):
    files = {
        f"out/agg_{FIXED_RF}_0.json": encode({**fixed_row, "conc": 32}),
        f"out/agg_{FIXED_RF}_1.json": encode({**fixed_row, "conc": 64}),
        "out/other.json": b"not json",
    }
    parse = parse_artifact(f"bmk_{FIXED_RF}", files)
    assert [cell.concurrency for cell in parse.cells] == [32, 64]


@pytest.mark.parametrize(
    ("isl", "osl", "scenario"),
    [
        (1024, 1024, "1k1k"),
        ("8192", "1024", "8k1k"),
        (1024, 8192, "1k8k"),
        (2048, 128, "isl2048_osl128"),
    ],
)
def test_fixed_seq_scenarios(fixed_row, isl, osl, scenario):
    (cell,) = parse_fixed({**fixed_row, "isl": isl, "osl": osl}).cells
    assert cell.scenario == scenario


def test_fixed_seq_strings_and_aliases(fixed_row):
    row = {
        **fixed_row,
        "hw": "B200-TRT",
        "framework": "trtllm",
        "precision": "nvfp4",
        "spec_decoding": "",
        "image": "nvcr.io#nvidia#tensorrt-llm:1.2",
        "conc": "64",
        "tp": "4",
        "dp_attention": "True",
        "disagg": "false",
        "tput_per_gpu": "1234.5",
    }
    (cell,) = parse_fixed(row).cells
    assert cell.config.hardware == "b200" and cell.config.runner_label == "B200-TRT"
    assert (cell.config.framework, cell.config.precision) == ("trt", "fp4")
    assert cell.config.spec_method == "none"
    assert cell.image == "nvcr.io/nvidia/tensorrt-llm:1.2"
    assert (cell.concurrency, cell.config.tp, cell.config.dp_attention) == (64, 4, True)
    assert cell.metrics["tput_per_gpu"] == 1234.5


def test_fixed_seq_v2_topology(fixed_row):
    row = {
        **fixed_row,
        "disagg": True,
        "is_multinode": "true",
        "prefill_tp": 4,
        "prefill_ep": 4,
        "prefill_dp_attention": "true",
        "prefill_num_workers": 2,
        "decode_tp": 8,
        "decode_ep": 8,
        "decode_dp_attention": True,
        "decode_num_workers": 1,
        "num_decode_gpu": 16,
    }
    (cell,) = parse_fixed(row).cells
    config = cell.config
    assert config.tp is None and config.pp is None and config.dp_attention is None
    assert (config.prefill_tp, config.prefill_ep, config.prefill_dp_attention) == (4, 4, True)
    assert (config.prefill_workers, config.prefill_gpus) == (2, 8)  # derived: tp x workers
    assert (config.decode_workers, config.decode_gpus) == (1, 16)  # as reported
    assert config.multinode and config.disagg
    assert "prefill_tp" not in cell.extra_metrics and "num_decode_gpu" not in cell.extra_metrics


@pytest.mark.parametrize(
    ("value", "reason"),
    [(float("nan"), "NaN"), (float("inf"), "infinite"), (-1.0, "negative"), ("fast", "number")],
)
def test_bad_metric_is_none_and_cell_kept(fixed_row, value, reason):
    (cell,) = parse_fixed({**fixed_row, "median_e2el": value, "mean_ttft": value}).cells
    assert cell.metrics["median_e2el"] is None
    assert reason in cell.invalid_metrics["median_e2el"]
    assert cell.metrics["tput_per_gpu"] is not None


def test_nan_literals_in_the_file(fixed_row):
    text = encode(fixed_row).replace(b'"p90_e2el": 23.9715', b'"p90_e2el": NaN')
    text = text.replace(b'"mean_e2el": 21.0036', b'"mean_e2el": -Infinity')
    (cell,) = parse_artifact(f"bmk_{FIXED_RF}", {f"agg_{FIXED_RF}.json": text}).cells
    assert cell.metrics["p90_e2el"] is None and cell.invalid_metrics["p90_e2el"] == "NaN"
    assert "mean_e2el" not in cell.extra_metrics
    assert cell.invalid_metrics["mean_e2el"] == "infinite"


def test_negative_extra_metric_is_kept(fixed_row):
    (cell,) = parse_fixed({**fixed_row, "power_delta_w": -12.5}).cells
    assert cell.extra_metrics["power_delta_w"] == -12.5


@pytest.mark.parametrize("field", ["hw", "framework", "precision", "conc", "isl", "osl"])
def test_missing_identity_field_is_an_artifact_error(fixed_row, field):
    del fixed_row[field]
    with pytest.raises(ArtifactError, match=f"agg_{FIXED_RF}.json: field '{field}': missing"):
        parse_fixed(fixed_row)


def test_missing_model_and_prefix_is_an_artifact_error(fixed_row):
    del fixed_row["model"], fixed_row["infmax_model_prefix"]
    with pytest.raises(ArtifactError, match="'infmax_model_prefix' \\(or 'model'\\): missing"):
        parse_fixed(fixed_row)


def test_model_prefix_from_hf_path_when_absent(fixed_row):
    del fixed_row["infmax_model_prefix"]
    (cell,) = parse_fixed({**fixed_row, "model_prefix": "unknown"}).cells
    assert cell.config.model_prefix == "dsv4"


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("hw", 355, "expected a string"),
        ("framework", ["sglang"], "expected a string"),
        ("conc", "sixty-four", "expected a number"),
        ("conc", 0, ">= 1"),
        ("conc", 6.5, "whole number"),
        ("tp", True, "expected a number"),
        ("dp_attention", "sometimes", "expected a boolean"),
        ("disagg", 2, "expected a boolean"),
        ("isl", float("nan"), "whole number"),
        ("kv_offloading", 3, "kv_offloading"),
    ],
)
def test_wrongly_typed_identity_field_is_an_artifact_error(fixed_row, field, value, problem):
    with pytest.raises(ArtifactError, match=problem):
        parse_fixed({**fixed_row, field: value})


@pytest.mark.parametrize("document", [[], "row", 3, None])
def test_wrong_top_level_type(document):
    with pytest.raises(ArtifactError, match="expected a JSON object"):
        parse_fixed(document)


def test_invalid_json_and_non_utf8_are_artifact_errors():
    name = f"bmk_{FIXED_RF}"
    with pytest.raises(ArtifactError, match="invalid JSON"):
        parse_artifact(name, {f"agg_{FIXED_RF}.json": b"{"})
    with pytest.raises(ArtifactError, match="not UTF-8"):
        parse_artifact(name, {f"agg_{FIXED_RF}.json": b'{"hw": "\xff"}'})


def test_missing_result_file_is_an_artifact_error():
    with pytest.raises(ArtifactError, match="a result file for .* not found"):
        parse_artifact(f"bmk_{FIXED_RF}", {"agg_other.json": b"{}"})


def test_unknown_names_are_flagged_not_dropped(fixed_row):
    row = {**fixed_row, "hw": "tpu7-gcp_0", "framework": "lmdeploy", "spec_decoding": "medusa"}
    parse = parse_fixed(row)
    (cell,) = parse.cells
    assert (cell.config.hardware, cell.config.framework, cell.config.spec_method) == (
        "tpu7-gcp",
        "lmdeploy",
        "medusa",
    )
    flagged = {(item.kind, item.value) for item in parse.unmapped}
    assert flagged == {
        (UnmappedKind.HARDWARE, "tpu7-gcp_0"),
        (UnmappedKind.FRAMEWORK, "lmdeploy"),
        (UnmappedKind.SPEC_METHOD, "medusa"),
    }
    assert all(item.where.endswith(f"agg_{FIXED_RF}.json") for item in parse.unmapped)


def test_agentic_example(agentic_row):
    parse = parse_agentic(agentic_row)
    assert parse.kind is ArtifactKind.AGENTIC
    (cell,) = parse.cells
    config = cell.config
    assert (config.hardware, config.runner_label) == ("mi355x", "cluster:mi355x-amds")
    assert (config.framework, config.spec_method, config.disagg, config.multinode) == (
        "atom-disagg",
        "mtp",
        True,
        True,
    )
    assert (config.prefill_tp, config.prefill_gpus, config.decode_tp, config.decode_gpus) == (
        8,
        8,
        8,
        8,
    )
    assert (config.kv_offload, config.kv_offload_backend) == ("dram", "lmcache 0.5.3")
    assert (cell.scenario, cell.isl, cell.osl, cell.concurrency) == (
        "agentic-coding",
        None,
        None,
        32,
    )
    metrics = cell.metrics
    assert metrics["tput_per_gpu"] == 6282.46836
    assert metrics["output_tput_per_gpu"] == 66.10894
    assert metrics["input_tput_per_gpu"] == 6216.35942
    assert metrics["median_e2el"] == 13.5801 and metrics["p90_e2el"] == 38.63273
    assert metrics["p99_e2el"] is None  # agentic rows have no p99
    assert metrics["median_intvty"] == 36.40269 and metrics["p90_ttft"] == 3.90252
    assert metrics["prefix_cache_hit_rate"] == 0.9137
    assert (metrics["num_requests_total"], metrics["num_requests_successful"]) == (6057, 6050)
    assert metrics["num_requests_errored"] == 3
    extras = cell.extra_metrics
    assert extras["server_metrics.cache.gpu_cache_hit_rate"] == 0.8814
    assert extras["request_metrics.latency.e2el.p95"] == 54.23902
    assert "request_metrics.latency.e2el.p90" not in extras  # indexed, not repeated
    assert not any(key.startswith(("router.", "dataset.", "prefill_")) for key in extras)
    assert "server_metrics.cache.frontend_cache_hit_rate" not in extras  # null
    assert cell.failure_reason == "" and cell.invalid_metrics == {}


def test_agentic_multinode_files_per_concurrency(agentic_row):
    files = {
        f"{AGENTIC_RF}_conc16.json": encode({**agentic_row, "conc": 16}),
        f"{AGENTIC_RF}_conc32.json": encode(agentic_row),
    }
    parse = parse_artifact(f"bmk_agentic_{AGENTIC_RF}", files)
    assert sorted(cell.concurrency for cell in parse.cells) == [16, 32]


def test_agentic_without_successful_requests_is_a_failed_cell(agentic_row):
    (cell,) = parse_agentic({**agentic_row, "num_requests_successful": 0}).cells
    assert cell.failure_reason == "no successful requests (0 of 6057)"


@pytest.mark.parametrize(
    ("backend", "expected"),
    [({"name": "lmcache"}, "lmcache"), ("mooncake", "mooncake"), (None, "")],
)
def test_agentic_kv_offload_backend_forms(agentic_row, backend, expected):
    (cell,) = parse_agentic({**agentic_row, "kv_offload_backend": backend}).cells
    assert cell.config.kv_offload_backend == expected


@pytest.mark.parametrize(("tier", "expected"), [("none", ""), (False, ""), ("CPU", "cpu")])
def test_agentic_kv_offload_forms(agentic_row, tier, expected):
    (cell,) = parse_agentic({**agentic_row, "kv_offloading": tier}).cells
    assert cell.config.kv_offload == expected


def test_agentic_invalid_nested_metric(agentic_row):
    agentic_row["request_metrics"]["latency"]["e2el"]["p90"] = float("nan")
    (cell,) = parse_agentic(agentic_row).cells
    assert cell.metrics["p90_e2el"] is None
    assert cell.invalid_metrics == {"p90_e2el": "NaN"}


def test_results_aggregate_mixes_rows_and_skips_bad_ones(fixed_row, agentic_row):
    broken = {**fixed_row}
    del broken["hw"]
    rows = [fixed_row, agentic_row, broken, "not a row", {**fixed_row, "conc": 128}]
    parse = parse_artifact("results_bmk", {"results/agg_bmk.json": encode(rows)})
    assert parse.kind is ArtifactKind.RESULTS_AGGREGATE
    assert [cell.scenario for cell in parse.cells] == ["8k1k", "agentic-coding", "8k1k"]
    assert all(cell.result_name == "" for cell in parse.cells)
    assert len(parse.row_errors) == 2
    assert "agg_bmk.json row 2: field 'hw': missing" in parse.row_errors[0]
    assert "row 3: expected a JSON object" in parse.row_errors[1]


def test_a_row_without_its_disagg_flag_needs_the_result_name(fixed_row):
    """Per-cell artifacts take the flag from their name; an aggregate row can only guess."""
    del fixed_row["disagg"]
    rf = FIXED_RF.replace("disagg-false", "disagg-true")
    (from_name,) = parse_artifact(f"bmk_{rf}", {f"agg_{rf}.json": encode(fixed_row)}).cells
    (guessed,) = parse_artifact("results_bmk", {"agg_bmk.json": encode([fixed_row])}).cells
    assert from_name.config.disagg is True and guessed.config.disagg is False
    assert not from_name.identity_complete and not guessed.identity_complete
    assert parse_fixed({**fixed_row, "disagg": "false"}).cells[0].identity_complete


def test_results_aggregate_tells_agentic_rows_by_shape(agentic_row):
    del agentic_row["scenario_type"]
    (cell,) = parse_artifact("results_bmk", {"agg_bmk.json": encode([agentic_row])}).cells
    assert cell.scenario == "agentic-coding" and cell.metrics["tput_per_gpu"] == 6282.46836


def test_results_aggregate_unmapped_reported_once(fixed_row):
    rows = [{**fixed_row, "hw": "tpu7"}, {**fixed_row, "hw": "tpu7", "conc": 8}]
    parse = parse_artifact("results_bmk", {"agg_bmk.json": encode(rows)})
    assert len(parse.unmapped) == 1 and parse.unmapped[0].where.endswith("row 0")


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"agg_bmk.json": b'{"rows": []}'}, "expected a JSON array, got dict"),
        ({"agg_bmk.json": b"[1,"}, "invalid JSON"),
        ({}, "agg_bmk.json not found"),
        ({"a/agg_bmk.json": b"[]", "b/agg_bmk.json": b"[]"}, "several files named agg_bmk.json"),
    ],
)
def test_results_aggregate_bad_artifact(files, message):
    with pytest.raises(ArtifactError, match=message):
        parse_artifact("results_bmk", files)
