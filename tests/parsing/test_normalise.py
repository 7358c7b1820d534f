from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from runs.parsing.normalise import (
    FRAMEWORK_ALIASES,
    KNOWN_FRAMEWORKS,
    KNOWN_GPUS,
    KNOWN_MODEL_PREFIXES,
    KNOWN_PRECISIONS,
    KNOWN_SPEC_METHODS,
    MODEL_NAME_PATTERNS,
    PRECISION_ALIASES,
    RUNNER_SUFFIXES,
    SPEC_METHOD_ALIASES,
    Normalised,
    normalise_framework,
    normalise_hardware,
    normalise_image,
    normalise_model,
    normalise_precision,
    normalise_spec_method,
    scenario_name,
)

NORMALISERS = (
    normalise_model,
    normalise_hardware,
    normalise_framework,
    normalise_precision,
    normalise_spec_method,
)
names = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789-_.:/ ", max_size=30)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("dsv4", "dsv4"),
        ("DSR1", "dsr1"),
        ("deepseek-ai/DeepSeek-V4-Pro", "dsv4"),
        ("deepseek-ai/DeepSeek-R1-0528", "dsr1"),
        ("nvidia/DeepSeek-R1-0528-FP4-V2", "dsr1"),
        ("amd/DeepSeek-R1-0528-MXFP4-Preview", "dsr1"),
        ("openai/gpt-oss-120b", "gptoss"),
        ("zai-org/GLM-5-FP8", "glm5"),
        ("zai-org/GLM-5.1-FP8", "glm5.1"),
        ("glm5.1", "glm5.1"),
        ("MiniMaxAI/MiniMax-M2.5", "minimaxm2.5"),
        ("MiniMax M2.5", "minimaxm2.5"),
        ("minimax_m25", "minimaxm2.5"),
        ("Qwen/Qwen3.5-397B-A17B", "qwen3.5"),
        ("Qwen3.5", "qwen3.5"),
        ("qwen35", "qwen3.5"),
        ("Kimi K2.5", "kimik2.5"),
        ("moonshotai/Kimi-K2.5", "kimik2.5"),
        (" kimik2.5 ", "kimik2.5"),
    ],
)
def test_models(value, expected):
    assert normalise_model(value) == Normalised(expected, True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("mi355x-amds_0", "mi355x"),
        ("B200-TRT", "b200"),
        ("cluster:mi355x-amds", "mi355x"),
        ("h100-dgxc-slurm_16", "h100"),
        ("MI355X", "mi355x"),
        ("mi325x-amd_2", "mi325x"),
        ("mi300x-cr_0", "mi300x"),
        ("gb200-nv_1", "gb200"),
        ("b200-nscale-slurm_3", "b200"),
        ("rtx6000pro-lat_0", "rtx6000pro"),
        ("h200-nb_1", "h200"),
        ("b300", "b300"),
    ],
)
def test_hardware(value, expected):
    assert normalise_hardware(value) == Normalised(expected, True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("sglang-disagg", "mori-sglang"),
        ("trtllm", "trt"),
        ("dynamo-trtllm", "dynamo-trt"),
        ("SGLang", "sglang"),
        ("atom-disagg", "atom-disagg"),
        ("dynamo-vllm", "dynamo-vllm"),
    ],
)
def test_frameworks(value, expected):
    assert normalise_framework(value) == Normalised(expected, True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("mxfp4", "fp4"), ("NVFP4", "fp4"), ("fp8", "fp8"), ("bf16", "bf16"), ("int4", "int4")],
)
def test_precisions(value, expected):
    assert normalise_precision(value) == Normalised(expected, True)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", "none"), (None, "none"), ("none", "none"), ("None", "none"), ("MTP", "mtp")]
    + [("eagle", "eagle"), ("dspark", "dspark")],
)
def test_spec_methods(value, expected):
    assert normalise_spec_method(value) == Normalised(expected, True)


@pytest.mark.parametrize(
    ("normaliser", "value", "expected"),
    [
        (normalise_model, "Foo/Bar-7B", "foo/bar-7b"),
        (normalise_hardware, "TPU-v5-nv_3", "tpu-v5"),
        (normalise_hardware, "cluster:l40s-cw", "l40s"),
        (normalise_framework, " LMDeploy ", "lmdeploy"),
        (normalise_precision, "FP6", "fp6"),
        (normalise_spec_method, "Medusa", "medusa"),
    ],
)
def test_unknowns_are_kept_and_flagged(normaliser, value, expected):
    assert normaliser(value) == Normalised(expected, False)


def test_table_targets_are_known():
    assert {prefix for _, prefix in MODEL_NAME_PATTERNS} <= KNOWN_MODEL_PREFIXES
    assert set(FRAMEWORK_ALIASES.values()) <= KNOWN_FRAMEWORKS
    assert set(PRECISION_ALIASES.values()) <= KNOWN_PRECISIONS
    assert set(SPEC_METHOD_ALIASES.values()) <= KNOWN_SPEC_METHODS


def test_every_runner_in_runners_yaml_maps_to_a_known_gpu(real_data: Path):
    labels = yaml.safe_load((real_data / "runners.yaml").read_text())["labels"]
    runners = set(labels) | {runner for group in labels.values() for runner in group}
    for runner in runners:
        assert normalise_hardware(runner).known, runner


@pytest.mark.parametrize("normaliser", NORMALISERS)
@given(value=names)
def test_idempotent(normaliser, value):
    key, _ = normaliser(value)
    assert normaliser(key).key == key


@pytest.mark.parametrize("normaliser", NORMALISERS)
@given(value=names)
def test_case_insensitive(normaliser, value):
    assert normaliser(value.upper()) == normaliser(value.lower()) == normaliser(value)


@pytest.mark.parametrize("normaliser", NORMALISERS)
@given(value=names)
def test_never_dropped(normaliser, value):
    key, known = normaliser(value)
    assert known or key == normaliser(key).key  # an unknown stays visible as a stable key
    if not known and normaliser is not normalise_hardware:
        assert key == value.strip().lower()


@given(
    gpu=st.sampled_from(sorted(KNOWN_GPUS)),
    suffixes=st.lists(st.sampled_from(RUNNER_SUFFIXES), max_size=3),
    index=st.none() | st.integers(min_value=0, max_value=99),
    cluster=st.booleans(),
    upper=st.booleans(),
)
def test_runner_suffixes_are_stripped(gpu, suffixes, index, cluster, upper):
    label = ("cluster:" if cluster else "") + gpu + "".join(suffixes)
    if index is not None:
        label += f"_{index:02d}"
    assert normalise_hardware(label.upper() if upper else label) == Normalised(gpu, True)


@given(st.sampled_from(sorted(KNOWN_MODEL_PREFIXES)))
def test_known_prefixes_map_to_themselves(prefix):
    assert normalise_model(prefix) == Normalised(prefix, True)


@pytest.mark.parametrize(
    ("isl", "osl", "expected"),
    [
        (1024, 1024, "1k1k"),
        (8192, 1024, "8k1k"),
        (1024, 8192, "1k8k"),
        (10240, 128, "isl10240_osl128"),
    ],
)
def test_scenario_names(isl, osl, expected):
    assert scenario_name(isl, osl) == expected


def test_image_hash_becomes_slash():
    assert normalise_image(" lmsysorg#sglang:v0.5 ") == "lmsysorg/sglang:v0.5"
