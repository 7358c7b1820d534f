"""Normalisers from the names the benchmark reports to the dashboard's canonical keys.

Each returns a `Normalised(key, known)`. An unknown name is kept as given (stripped,
lower-cased) with known=False, so the caller can report it as `Unmapped`; nothing is dropped.
Every normaliser is idempotent: normalising a returned key gives the same key back.

To support a new model, GPU, engine, precision or speculative method, extend the tables below.
"""

import re
from typing import NamedTuple

# Canonical model prefixes (the benchmark's `infmax_model_prefix`).
KNOWN_MODEL_PREFIXES = frozenset(
    {
        "70b",
        "dsr1",
        "dsv4",
        "glm5",
        "glm5.1",
        "glm5.2",
        "gptoss",
        "kimik2.5",
        "kimik2.6",
        "kimik3",
        "minimaxm2.5",
        "minimaxm3",
        "qwen3.5",
    }
)

# Model names, squashed (lower-case, no "-", "_" or spaces; HF org dropped), that start with a
# pattern map to its prefix. Order matters: the first match wins, so longer names come first.
MODEL_NAME_PATTERNS: tuple[tuple[str, str], ...] = (
    ("deepseekv4", "dsv4"),
    ("deepseekr1", "dsr1"),
    ("gptoss", "gptoss"),
    ("glm5.2", "glm5.2"),
    ("glm5.1", "glm5.1"),
    ("glm5", "glm5"),
    ("qwen3.5", "qwen3.5"),
    ("qwen35", "qwen3.5"),
    ("kimik2.6", "kimik2.6"),
    ("kimik2.5", "kimik2.5"),
    ("kimik3", "kimik3"),
    ("minimaxm2.5", "minimaxm2.5"),
    ("minimaxm25", "minimaxm2.5"),
    ("minimaxm3", "minimaxm3"),
    ("llama3.370b", "70b"),
)

KNOWN_GPUS = frozenset(
    {"h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x", "rtx6000pro"}
)
# Runner labels are `<gpu>-<site/flavour...>_<index>`, optionally `cluster:<gpu>-<site>`.
# These suffixes are stripped from labels of GPUs not (yet) in KNOWN_GPUS.
RUNNER_SUFFIXES: tuple[str, ...] = (
    "-amds",
    "-amd",
    "-nv",
    "-nb",
    "-cw",
    "-cr",
    "-tw",
    "-trt",
    "-dgxc",
    "-slurm",
    "-nscale",
    "-lat",
    "-multinode",
    "-disagg",
)
CLUSTER_PREFIX = "cluster:"
RUNNER_INDEX = re.compile(r"_\d+$")

KNOWN_FRAMEWORKS = frozenset(
    {
        "sglang",
        "vllm",
        "trt",
        "atom",
        "atom-disagg",
        "dynamo-sglang",
        "dynamo-trt",
        "dynamo-vllm",
        "mori-sglang",
        "llmd-vllm",
        "tilert",
    }
)
FRAMEWORK_ALIASES = {
    "sglang-disagg": "mori-sglang",
    "trtllm": "trt",
    "tensorrt-llm": "trt",
    "dynamo-trtllm": "dynamo-trt",
}

KNOWN_PRECISIONS = frozenset({"fp4", "fp8", "bf16", "fp16", "int4", "int8"})
PRECISION_ALIASES = {"mxfp4": "fp4", "nvfp4": "fp4"}

NO_SPEC_METHOD = "none"
KNOWN_SPEC_METHODS = frozenset({NO_SPEC_METHOD, "mtp", "eagle", "eagle3", "dspark"})
SPEC_METHOD_ALIASES = {"": NO_SPEC_METHOD}

# Fixed sequence-length scenarios by (isl, osl); others are named isl<N>_osl<M>.
SCENARIO_BY_SEQ_LENS: dict[tuple[int, int], str] = {
    (1024, 1024): "1k1k",
    (8192, 1024): "8k1k",
    (1024, 8192): "1k8k",
}
SEQ_LENS_BY_SCENARIO = {name: lens for lens, name in SCENARIO_BY_SEQ_LENS.items()}
AGENTIC_SCENARIO = "agentic-coding"


class Normalised(NamedTuple):
    key: str
    known: bool


def _clean(value: str | None) -> str:
    return (value or "").strip().lower()


def _squash(name: str) -> str:
    return re.sub(r"[-_\s]+", "", name)


def normalise_model(value: str | None) -> Normalised:
    """A model prefix or model name (HF path, display name) to its canonical prefix."""
    cleaned = _clean(value)
    if cleaned in KNOWN_MODEL_PREFIXES:
        return Normalised(cleaned, True)
    squashed = _squash(cleaned.rsplit("/", 1)[-1])
    for pattern, prefix in MODEL_NAME_PATTERNS:
        if squashed.startswith(pattern):
            return Normalised(prefix, True)
    return Normalised(cleaned, False)


def normalise_hardware(value: str | None) -> Normalised:
    """A runner label (mi355x-amds_0, B200-TRT, cluster:mi355x-amds) to its GPU key."""
    label = _clean(value)
    previous = None
    while label != previous:  # strip until stable, so that the result is idempotent
        previous = label
        label = RUNNER_INDEX.sub("", label.removeprefix(CLUSTER_PREFIX))
        for gpu in KNOWN_GPUS:
            if label == gpu or label.startswith(gpu + "-"):
                return Normalised(gpu, True)
        for suffix in RUNNER_SUFFIXES:
            label = label.removesuffix(suffix)
    return Normalised(label, False)


def _by_table(value: str | None, aliases: dict[str, str], known: frozenset[str]) -> Normalised:
    cleaned = _clean(value)
    key = aliases.get(cleaned, cleaned)
    return Normalised(key, key in known)


def normalise_framework(value: str | None) -> Normalised:
    return _by_table(value, FRAMEWORK_ALIASES, KNOWN_FRAMEWORKS)


def normalise_precision(value: str | None) -> Normalised:
    return _by_table(value, PRECISION_ALIASES, KNOWN_PRECISIONS)


def normalise_spec_method(value: str | None) -> Normalised:
    """Speculative decoding method; absent or empty means none."""
    return _by_table(value, SPEC_METHOD_ALIASES, KNOWN_SPEC_METHODS)


def scenario_name(isl: int, osl: int) -> str:
    return SCENARIO_BY_SEQ_LENS.get((isl, osl), f"isl{isl}_osl{osl}")


def normalise_image(value: str) -> str:
    """Older artifacts encode the '/' of a docker reference as '#'."""
    return value.strip().replace("#", "/")
